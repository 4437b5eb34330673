import { Inject, Injectable, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import type { ProviderEndpoint } from '@parley/llm';
import { registerSecrets } from '@parley/observability';
import { DomainError } from '@parley/core';
import { CatalogDestinations, OPENAI_BASE_URL, refused } from '../apply/destinations';
import { callUrl } from '../secrets/tool-secrets';
import { CatalogReader } from '../store/catalog-reader';
import { callTimeCache } from './call-time-cache';

/**
 * The LLM adapter's view of a provider: where to call and with which key. The key is
 * decrypted here, at call time, and never leaves the process in an event, a log or a reply.
 * A looked-up endpoint is reused for CALL_TIME_TTL_MS. A base URL outside
 * LLM_PROVIDER_ALLOWED_HOSTS (for a client's own provider, also SELF_SERVICE_PROVIDER_ALLOWED_HOSTS)
 * is refused here too (FORBIDDEN), for rows written before a narrowing.
 */
@Injectable()
export class ProviderCredentials {
  readonly endpointFor = callTimeCache((code) => this.lookUp(code));

  private readonly destinations: CatalogDestinations | null;

  constructor(
    @Inject(CatalogReader) private readonly reader: CatalogReader,
    @Optional() @Inject(CONFIG) config: Config | null = null,
  ) {
    this.destinations = config ? new CatalogDestinations(config.catalog) : null;
  }

  private async lookUp(providerCode: string): Promise<ProviderEndpoint> {
    const provider = await this.reader.one('providers', providerCode);
    if (!provider) throw DomainError.notFound('Provider', providerCode);
    const { record, secret } = provider;
    refused(this.destinations?.providerRowRefusal(record) ?? null, { provider: providerCode });
    registerSecrets(secret);
    const config = (secret?.providerConfig ?? {}) as { headers?: Record<string, string> };
    return {
      code: providerCode,
      baseUrl: callUrl(record.baseUrl, secret, 'baseUrl') ?? OPENAI_BASE_URL,
      apiKey: (secret?.apiKey as string | undefined) ?? null,
      ...(config.headers ? { headers: config.headers } : {}),
    };
  }
}
