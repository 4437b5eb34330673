import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

/** The content types a catalog bundle may be sent as, besides JSON. */
const YAML_CONTENT_TYPES = ['application/yaml', 'text/yaml', 'application/x-yaml'];

interface FastifyLike {
  hasContentTypeParser(type: string): boolean;
  addContentTypeParser(
    type: string[],
    options: { parseAs: 'string' },
    parser: (req: unknown, body: string, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
}

/**
 * Lets Fastify accept YAML bodies: they reach the controller as text and are parsed (with
 * line-numbered errors) by the catalog. Nothing happens on other HTTP adapters or without HTTP.
 */
@Injectable()
export class YamlBodyParser implements OnModuleInit {
  constructor(@Optional() @Inject(HttpAdapterHost) private readonly adapterHost?: HttpAdapterHost) {}

  onModuleInit(): void {
    const instance = this.adapterHost?.httpAdapter?.getInstance?.() as Partial<FastifyLike> | undefined;
    if (!instance?.addContentTypeParser || !instance.hasContentTypeParser) return;
    const missing = YAML_CONTENT_TYPES.filter((type) => !instance.hasContentTypeParser!(type));
    if (missing.length > 0)
      instance.addContentTypeParser(missing, { parseAs: 'string' }, (_req, body, done) => done(null, body));
  }
}
