import '@fastify/multipart';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { CurrentPrincipal, Roles, type Principal } from '@parley/auth';
import { DomainError } from '@parley/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IngestionService, type CollectionDocuments, type DocumentInput } from '../ingestion/ingestion.service';
import type { DocumentRecord } from '../ingestion/document-registry';
import type { SourceFile } from '../ingestion/extract';

const DEFAULT_WAIT_MS = 30_000;
const MAX_WAIT_MS = 300_000;

function waitOf(wait: string | undefined, timeoutMs: string | undefined): number | null {
  if (wait === undefined || wait === 'false') {
    if (timeoutMs !== undefined) throw DomainError.validation([{ path: 'timeoutMs', message: 'needs wait=true' }]);
    return null;
  }
  if (wait !== 'true') throw DomainError.validation([{ path: 'wait', message: 'expected true or false' }]);
  if (timeoutMs === undefined) return DEFAULT_WAIT_MS;
  const ms = Number(timeoutMs);
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_WAIT_MS)
    throw DomainError.validation([{ path: 'timeoutMs', message: `expected a whole number from 0 to ${MAX_WAIT_MS}` }]);
  return ms;
}

/** Multipart fields beside the file: documentId, title, and metadata as a JSON object. */
function fieldsOf(fields: Record<string, string>): Omit<DocumentInput, 'file' | 'text'> {
  const input: Omit<DocumentInput, 'file' | 'text'> = { documentId: fields.documentId, title: fields.title };
  if (fields.metadata !== undefined) {
    try {
      input.metadata = JSON.parse(fields.metadata);
    } catch {
      throw DomainError.validation([{ path: 'metadata', message: 'expected a JSON object' }]);
    }
  }
  return input;
}

/**
 * A collection's documents over HTTP (docs/knowledge.md, "Ingestion"): add one (a JSON text or
 * a multipart upload of one .txt, .md, .html or .pdf file), list them with their counts, remove
 * one. Adding answers 202 once the document is queued; `?wait=true` waits for its ingestion.
 * Writing documents is for admins, as writing the catalog is; any role may read.
 */
@Controller('api/v1/collections')
@Roles('admin', 'auditor', 'client')
export class DocumentsController {
  constructor(@Inject(IngestionService) private readonly ingestion: IngestionService) {}

  @Post(':code/documents')
  @Roles('admin')
  @HttpCode(202)
  async add(
    @Param('code') code: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @CurrentPrincipal() principal: Principal,
    @Query('wait') wait?: string,
    @Query('timeoutMs') timeoutMs?: string,
  ): Promise<DocumentRecord> {
    const waitMs = waitOf(wait, timeoutMs);
    const input = request.isMultipart() ? await this.upload(request) : this.json(body);
    const queued = await this.ingestion.submit(code, input, principal.subject);
    if (waitMs === null) return queued;
    const settled = await this.ingestion.settle(code, queued.documentId, waitMs);
    if (settled.status === 'ready' || settled.status === 'failed') void reply.status(200);
    return settled;
  }

  private json(body: unknown): DocumentInput {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw DomainError.validation([
        { path: '', message: 'expected a JSON object {documentId?, title, text, metadata?}' },
      ]);
    const { documentId, title, text, metadata, ...rest } = body as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0)
      throw DomainError.validation(unknown.map((path) => ({ path, message: 'is not a field of a document' })));
    return { documentId, title, text, metadata };
  }

  private async upload(request: FastifyRequest): Promise<DocumentInput> {
    const fields: Record<string, string> = {};
    let file: SourceFile | undefined;
    let fileName = 'the file';
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          fileName = part.filename || 'the file';
          const bytes = await part.toBuffer();
          file = { fileName: part.filename || 'upload', mediaType: part.mimetype, bytes };
        } else fields[part.fieldname] = String(part.value);
      }
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'FST_REQ_FILE_TOO_LARGE') throw this.ingestion.tooLarge(fileName);
      if (code === 'FST_FILES_LIMIT')
        throw DomainError.validation(
          [{ path: 'file', message: 'one file per request' }],
          'Upload one file per request.',
        );
      throw err;
    }
    if (!file)
      throw DomainError.validation(
        [{ path: 'file', message: 'expected a file part (.txt, .md, .html or .pdf)' }],
        'The upload carries no file.',
      );
    return { ...fieldsOf(fields), file };
  }

  /** The collection's documents, each with its status, chunk and token counts, and the totals. */
  @Get(':code/documents')
  list(@Param('code') code: string): Promise<CollectionDocuments> {
    return this.ingestion.list(code);
  }

  @Get(':code/documents/:id')
  get(@Param('code') code: string, @Param('id') id: string): Promise<DocumentRecord> {
    return this.ingestion.get(code, id);
  }

  /** The collection's document and chunk counts. */
  @Get(':code')
  counts(@Param('code') code: string): Promise<Omit<CollectionDocuments, 'documents'>> {
    return this.ingestion.counts(code);
  }

  @Delete(':code/documents/:id')
  @HttpCode(204)
  remove(@Param('code') code: string, @Param('id') id: string): Promise<void> {
    return this.ingestion.remove(code, id);
  }
}
