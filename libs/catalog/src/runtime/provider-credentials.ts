import { Inject, Injectable } from '@nestjs/common';
import type { ProviderEndpoint } from '@parley/llm';
import { registerSecrets } from '@parley/observability';
import { DomainError } from '@parley/core';
import { CatalogReader } from '../store/catalog-reader';
import { callTimeCache } from './call-time-cache';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * The LLM adapter's view of a provider: where to call and with which key. The key is
 * decrypted here, at call time, and never leaves the process in an event, a log or a reply.
 * A looked-up endpoint is reused for CALL_TIME_TTL_MS.
 */
@Injectable()
export class ProviderCredentials {
  readonly endpointFor = callTimeCache((code) => this.lookUp(code));

  constructor(@Inject(CatalogReader) private readonly reader: CatalogReader) {}

  private async lookUp(providerCode: string): Promise<ProviderEndpoint> {
    const provider = await this.reader.one('providers', providerCode);
    if (!provider) throw DomainError.notFound('Provider', providerCode);
    const { record, secret } = provider;
    registerSecrets(secret);
    const config = (secret?.providerConfig ?? {}) as { headers?: Record<string, string> };
    return {
      code: providerCode,
      baseUrl: (record.baseUrl as string | null) ?? OPENAI_BASE_URL,
      apiKey: (secret?.apiKey as string | undefined) ?? null,
      ...(config.headers ? { headers: config.headers } : {}),
    };
  }
}
