import { Inject, Injectable, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { registerSecrets } from '@parley/observability';
import { DomainError } from '@parley/core';
import { CatalogDestinations, refused } from '../apply/destinations';
import { callUrl } from '../secrets/tool-secrets';
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
  private readonly destinations: CatalogDestinations | null;

  constructor(
    @Inject(CatalogReader) private readonly reader: CatalogReader,
    @Optional() @Inject(CONFIG) config: Config | null = null,
  ) {
    this.destinations = config ? new CatalogDestinations(config.catalog) : null;
  }

  /**
   * The pool asks right before it spawns or connects: a stdio command outside MCP_STDIO_COMMANDS
   * or a URL outside MCP_HTTP_ALLOWED_HOSTS is refused (FORBIDDEN) even if the catalog holds it.
   */
  async configFor(name: string): Promise<McpClientConfig> {
    const client = await this.reader.one('mcpClients', name);
    if (!client) throw DomainError.notFound('MCP client', name);
    const { record, secret } = client;
    const d = this.destinations;
    refused(
      record.mcpTransportType === 'ST'
        ? (d?.stdioRefusal(record.command, record.args) ?? null)
        : (d?.mcpUrlRefusal(record.mcpConnectionUrl) ?? null),
      { mcpClient: name },
    );
    registerSecrets(secret);
    const env = secret?.env as Record<string, string> | undefined;
    const headers = secret?.headers as Record<string, string> | undefined;
    return {
      name,
      transport: record.mcpTransportType as McpClientConfig['transport'],
      ...(record.command ? { command: record.command as string, args: record.args as string[] } : {}),
      ...(record.mcpConnectionUrl ? { url: callUrl(record.mcpConnectionUrl, secret, 'mcpConnectionUrl')! } : {}),
      ...(env ? { env } : {}),
      ...(headers ? { headers } : {}),
    };
  }
}
