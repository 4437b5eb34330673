import { Inject, Injectable } from '@nestjs/common';
import { registerSecrets } from '@parley/observability';
import { DomainError } from '@parley/core';
import type { ToolConfig } from '@parley/tools';
import type { Row } from '../model/entity-schemas';
import { restoreToolSecrets } from '../secrets/tool-secrets';
import { CatalogReader } from '../store/catalog-reader';
import { callTimeCache } from './call-time-cache';

/**
 * Tool executors' view of a catalog tool: its execution config with secrets, at call time,
 * reused for CALL_TIME_TTL_MS.
 */
@Injectable()
export class CatalogToolConfigSource {
  readonly configFor = callTimeCache((code) => this.lookUp(code));

  constructor(@Inject(CatalogReader) private readonly reader: CatalogReader) {}

  private async lookUp(toolCode: string): Promise<ToolConfig> {
    const tool = await this.reader.one('tools', toolCode);
    if (!tool) throw DomainError.notFound('Tool', toolCode);
    registerSecrets(tool.secret);
    const config = structuredClone(tool.record.config) as Row;
    restoreToolSecrets(config, tool.secret);
    return Object.freeze(config) as ToolConfig;
  }
}
