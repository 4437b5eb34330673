import { Module } from '@nestjs/common';
import { OpenApiController } from './openapi.controller';

/** GET /docs and /docs-json: the HTTP API described from the zod schemas its routes validate with. */
@Module({ controllers: [OpenApiController] })
export class OpenApiModule {}
