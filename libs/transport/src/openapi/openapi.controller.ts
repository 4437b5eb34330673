import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import { Public } from '@parley/auth';
import { DomainError } from '@parley/core';
import type { FastifyReply } from 'fastify';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { version } from '../../../../package.json';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi-document';

/** The Swagger UI files /docs serves, from the swagger-ui-dist that @nestjs/swagger ships. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Parley API</title>
  <link rel="icon" href="/docs/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="ui"></div>
  <noscript><a href="/docs-json">The OpenAPI document (JSON)</a></noscript>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-init.js"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI; a file of its own, as the Content-Security-Policy allows no inline script.
 * The credential typed into "Authorize" lives in the page only: it is not persisted to
 * localStorage, and one an older page persisted there is removed.
 */
const INIT = `localStorage.removeItem('authorized');
window.ui = SwaggerUIBundle({ url: '/docs-json', dom_id: '#ui', persistAuthorization: false, validatorUrl: null });
`;

function assetsDir(): string {
  const swagger = dirname(require.resolve('@nestjs/swagger'));
  return dirname(require.resolve('swagger-ui-dist/package.json', { paths: [swagger] }));
}

/** GET /docs (Swagger UI) and GET /docs-json (the OpenAPI 3.1 document). Public, like /health. */
@Controller()
@Public()
export class OpenApiController {
  private document: OpenApiDocument | null = null;
  private readonly assets = new Map<string, Buffer>();

  @Get('docs-json')
  json(): OpenApiDocument {
    return (this.document ??= buildOpenApiDocument(version));
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  page(): string {
    return PAGE;
  }

  @Get('docs/swagger-init.js')
  @Header('content-type', 'application/javascript; charset=utf-8')
  init(): string {
    return INIT;
  }

  @Get('docs/:asset')
  async asset(@Param('asset') name: string, @Res({ passthrough: true }) res: FastifyReply): Promise<Buffer> {
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) throw DomainError.notFound('Documentation file', name);
    let body = this.assets.get(name);
    if (!body) {
      body = await readFile(join(assetsDir(), name));
      this.assets.set(name, body);
    }
    void res.header('content-type', type).header('cache-control', 'public, max-age=86400');
    return body;
  }
}
