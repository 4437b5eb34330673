import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { parseOrThrow } from '@parley/platform';
import { z } from 'zod';
import { Roles } from '../http/auth.decorators';
import { ROLES } from '../principal';
import { ApiKeysService } from './api-keys.service';

/** The body of POST /api/v1/keys (also what the OpenAPI document describes). */
export const createKeyRequest = z.strictObject({
  subject: z.string().min(1).max(200),
  roles: z.array(z.enum(ROLES)).min(1),
  name: z.string().max(200).optional(),
});

/** Admin-only key management. The created key is in the 201 answer and never again. */
@Controller('api/v1/keys')
@Roles('admin')
export class KeysHttpController {
  constructor(@Inject(ApiKeysService) private readonly keys: ApiKeysService) {}

  @Post()
  @HttpCode(201)
  create(@Body() body: unknown) {
    return this.keys.create(parseOrThrow(createKeyRequest, body ?? {}));
  }

  @Get()
  async list() {
    return { keys: await this.keys.list() };
  }

  @Delete(':id')
  revoke(@Param('id') id: string) {
    return this.keys.revoke(id);
  }
}
