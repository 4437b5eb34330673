import { Inject, Injectable } from '@nestjs/common';
import { registerSecrets } from '@parley/observability';
import { DomainError } from '@parley/core';
import { CatalogReader } from '../store/catalog-reader';

/** How the MCP pool connects to a catalog MCP client; env and headers are decrypted here. */
export interface McpClientConfig {
  name: string;
  /** ST stdio, SH streamable HTTP, SE server-sent events (seed 000). */
  transport: 'ST' | 'SH' | 'SE';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
}

@Injectable()
export class CatalogMcpClientConfigSource {
  constructor(@Inject(CatalogReader) private readonly reader: CatalogReader) {}

  async configFor(name: string): Promise<McpClientConfig> {
    const client = await this.reader.one('mcpClients', name);
    if (!client) throw DomainError.notFound('MCP client', name);
    const { record, secret } = client;
    registerSecrets(secret);
    const env = secret?.env as Record<string, string> | undefined;
    const headers = secret?.headers as Record<string, string> | undefined;
    return {
      name,
      transport: record.mcpTransportType as McpClientConfig['transport'],
      ...(record.command ? { command: record.command as string, args: record.args as string[] } : {}),
      ...(record.mcpConnectionUrl ? { url: record.mcpConnectionUrl as string } : {}),
      ...(env ? { env } : {}),
      ...(headers ? { headers } : {}),
    };
  }
}
