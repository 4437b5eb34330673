import { Inject, Injectable } from '@nestjs/common';
import type { Row } from '../model/entity-schemas';
import { CatalogReader } from '../store/catalog-reader';

/**
 * The catalog reads of seed 000's SYS_LLM_QueryApi. Plain API-shaped objects, never a
 * secret; null where the seed returns null (HTTP turns it into 404, NATS into `{result: null}`).
 */
@Injectable()
export class CatalogQueries {
  constructor(@Inject(CatalogReader) private readonly reader: CatalogReader) {}

  getAllActions(): Promise<Row[]> {
    return this.reader.all('actions');
  }

  findActionByCode(code: string): Promise<Row | null> {
    return this.reader.record('actions', code);
  }

  findAgentByCode(code: string): Promise<Row | null> {
    return this.reader.record('agents', code);
  }

  findToolByCode(code: string): Promise<Row | null> {
    return this.reader.record('tools', code);
  }

  findMcpClientByName(name: string): Promise<Row | null> {
    return this.reader.record('mcpClients', name);
  }
}
