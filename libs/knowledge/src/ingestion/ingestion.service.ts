import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { DomainError, type FieldProblem } from '@parley/core';
import { JOB_QUEUE, PG_POOL, type JobQueue } from '@parley/platform';
import { tokenCounter } from '@parley/prompt';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Collections } from '../collections';
import type { Chunk, MetadataValue, Queryable } from '../vector-store.port';
import { COLLECTION_SOURCE, type CollectionSource, type ResolvedCollection } from '../vector-store.resolver';
import { chunkText, type TextChunk } from './chunker';
import { DocumentRegistry, type DocumentRecord } from './document-registry';
import { extractText, type SourceFile } from './extract';

/** The queue ingestion jobs go through; the worker-bearing apps consume it. */
export const INGESTION_QUEUE = 'ingestion';

/** An ingestion job: ids only, the text waits in kn_document_texts under `revision`. */
export interface IngestionJob {
  collection: string;
  documentId: string;
  revision: string;
}

/** A document to ingest: a JSON text, or an uploaded file (`file`). */
export interface DocumentInput {
  documentId?: unknown;
  title?: unknown;
  text?: unknown;
  metadata?: unknown;
  file?: SourceFile;
}

export interface CollectionDocuments {
  collection: string;
  counts: { documents: number; chunks: number; tokens: number };
  documents: DocumentRecord[];
}

/** Where a job's chunks went (set once its first batch is embedded). */
interface Written {
  to?: ResolvedCollection;
}

/** Keys Parley sets on every chunk's metadata. */
const RESERVED_KEYS = ['title', 'chunkIndex'];
const DOCUMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/;
const MAX_TITLE = 500;
const MAX_METADATA_KEYS = 64;

const isMetadataValue = (v: unknown): v is MetadataValue =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** What ingestion settings the service runs with (config.ingestion). */
export interface IngestionSettings {
  chunkTokens: number;
  chunkOverlap: number;
  maxBytes: number;
  batchSize: number;
}

/**
 * Document ingestion into a collection. `submit` validates in the request what is cheap and
 * decisive (fields, size, type, a PDF that opens and has text), stores the document's row as
 * `queued` with its extracted text, and queues a job; nothing is written when it refuses. The
 * job (`run`) chunks the text, embeds and stores the chunks in batches (one embedding call and
 * one multi-row upsert per batch), then prunes the document's chunks past the new count, so a
 * re-ingested document never has none. A job that fails is retried; after its last attempt the
 * document is `failed` with the error and keeps its earlier chunks.
 */
@Injectable()
export class IngestionService {
  private readonly registry: DocumentRegistry;
  private readonly settings: IngestionSettings;

  constructor(
    @Inject(PG_POOL) db: Queryable,
    @Inject(Collections) private readonly collections: Collections,
    @Inject(COLLECTION_SOURCE) private readonly source: CollectionSource,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(CONFIG) config: Config,
  ) {
    this.registry = new DocumentRegistry(db);
    this.settings = config.ingestion;
  }

  async submit(collection: string, input: DocumentInput, ingestedBy: string): Promise<DocumentRecord> {
    const problems: FieldProblem[] = [];
    const documentId = input.documentId === undefined || input.documentId === null ? randomUUID() : input.documentId;
    if (typeof documentId !== 'string' || !DOCUMENT_ID.test(documentId))
      problems.push({
        path: 'documentId',
        message: 'expected 1–200 letters, digits or . _ : @ - (starting with a letter or digit)',
      });
    const title = input.title ?? input.file?.fileName;
    if (typeof title !== 'string' || title.trim() === '' || title.length > MAX_TITLE)
      problems.push({ path: 'title', message: `expected a non-empty string of at most ${MAX_TITLE} characters` });
    const metadata = this.metadataOf(input.metadata, problems);
    if (!input.file && (typeof input.text !== 'string' || input.text.trim() === ''))
      problems.push({ path: 'text', message: 'expected a non-empty string (or upload a file)' });
    if (input.file && input.text !== undefined)
      problems.push({ path: 'text', message: 'give either a text or a file, not both' });
    if (problems.length > 0) throw DomainError.validation(problems);

    const bytes = input.file ? input.file.bytes.byteLength : Buffer.byteLength(input.text as string);
    this.assertSize(bytes, input.file?.fileName);
    // NOT_FOUND for an unknown collection, before the file is read.
    await this.source.collection(collection);
    const extracted = input.file
      ? await extractText(input.file)
      : { mediaType: 'text/plain' as const, text: input.text as string };
    const revision = randomUUID();
    const record = await this.registry.queue({
      collection,
      documentId: documentId as string,
      title: (title as string).trim(),
      metadata,
      sourceName: input.file?.fileName ?? null,
      mediaType: extracted.mediaType,
      bytes,
      ingestedBy,
      revision,
      text: extracted.text,
    });
    await this.jobs.enqueue<IngestionJob>(
      INGESTION_QUEUE,
      `ingest:${revision}`,
      { collection, documentId: record.documentId, revision },
      { preferLocal: true },
    );
    return record;
  }

  private assertSize(bytes: number, fileName: string | undefined): void {
    if (bytes <= this.settings.maxBytes) return;
    const what = fileName ? `File '${fileName}'` : 'The text';
    throw new DomainError(
      'PAYLOAD_TOO_LARGE',
      `${what} is ${bytes} bytes; a document may have at most ${this.settings.maxBytes}.`,
      {
        ...(fileName ? { file: fileName } : {}),
        bytes,
        maxBytes: this.settings.maxBytes,
      },
    );
  }

  /** PAYLOAD_TOO_LARGE for an upload cut off at the limit (the multipart reader stops there). */
  tooLarge(fileName: string): DomainError {
    return new DomainError(
      'PAYLOAD_TOO_LARGE',
      `File '${fileName}' is over ${this.settings.maxBytes} bytes, the most a document may have.`,
      { file: fileName, maxBytes: this.settings.maxBytes },
    );
  }

  private metadataOf(value: unknown, problems: FieldProblem[]): Record<string, MetadataValue> {
    if (value === undefined || value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push({ path: 'metadata', message: 'expected an object of string, number, boolean or null values' });
      return {};
    }
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > MAX_METADATA_KEYS)
      problems.push({ path: 'metadata', message: `expected at most ${MAX_METADATA_KEYS} keys` });
    for (const [key, v] of entries) {
      if (RESERVED_KEYS.includes(key))
        problems.push({ path: `metadata.${key}`, message: 'is set by Parley on every chunk; choose another key' });
      else if (!isMetadataValue(v))
        problems.push({ path: `metadata.${key}`, message: 'expected a string, number, boolean or null' });
    }
    return value as Record<string, MetadataValue>;
  }

  /** The collection's documents with their status and counts, and its totals. */
  async list(collection: string): Promise<CollectionDocuments> {
    await this.source.collection(collection);
    const [documents, counts] = await Promise.all([this.registry.list(collection), this.registry.counts(collection)]);
    return { collection, counts, documents };
  }

  async counts(collection: string): Promise<Omit<CollectionDocuments, 'documents'>> {
    await this.source.collection(collection);
    return { collection, counts: await this.registry.counts(collection) };
  }

  async get(collection: string, documentId: string): Promise<DocumentRecord> {
    await this.source.collection(collection);
    const doc = await this.registry.get(collection, documentId);
    if (!doc) throw DomainError.notFound('Document', documentId);
    return doc.record;
  }

  /** Waits, up to `timeoutMs`, for the document's ingestion to end (ready or failed); answers its row then. */
  async settle(collection: string, documentId: string, timeoutMs: number): Promise<DocumentRecord> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const doc = await this.get(collection, documentId);
      if (doc.status === 'ready' || doc.status === 'failed' || Date.now() >= deadline) return doc;
      await sleep(50);
    }
  }

  /** Removes a document's chunks and its row (NOT_FOUND when the collection has no such document). */
  async remove(collection: string, documentId: string): Promise<void> {
    await this.source.collection(collection);
    const doc = await this.registry.get(collection, documentId);
    if (!doc) throw DomainError.notFound('Document', documentId);
    if (doc.dimensions !== null) {
      const resolved = await this.collections.resolve(collection, doc.dimensions);
      await resolved.store.deleteDocument(resolved.config.collectionName, documentId);
    }
    await this.registry.remove(collection, documentId);
  }

  /** The job: chunk the stored text, embed and store the chunks, prune the old ones, count. */
  async run(job: IngestionJob, context: { attempt: number; maxAttempts?: number }): Promise<void> {
    const { collection, documentId, revision } = job;
    const text = await this.registry.text(revision);
    if (text === null || !(await this.registry.start(collection, documentId, revision))) {
      // Replaced by a newer ingestion, deleted (or its collection), or done already.
      await this.registry.dropText(revision);
      return;
    }
    const written: Written = {};
    try {
      const doc = (await this.registry.get(collection, documentId))!;
      const config = await this.source.collection(collection);
      const chunks = chunkText(text, {
        chunkTokens: this.settings.chunkTokens,
        overlap: this.settings.chunkOverlap,
        count: tokenCounter(config.embeddingModel.name),
      });
      const stored = await this.storeChunks(
        collection,
        documentId,
        doc.record.title,
        doc.record.metadata,
        chunks,
        written,
      );
      // Deleted while its chunks were being written: they go too. (Replaced: the newer job
      // overwrites and prunes them.)
      if (!(await this.registry.ready(collection, documentId, revision, stored)))
        await this.dropWhenGone(collection, documentId, written);
    } catch (err) {
      // The document (or its whole collection) was deleted meanwhile: what was written goes, and
      // there is nothing to retry. Else the attempt failed as any does.
      if (await this.dropWhenGone(collection, documentId, written)) return;
      const final = context.attempt >= (context.maxAttempts ?? 1);
      const message = err instanceof Error ? err.message : String(err);
      await this.registry.failed(collection, documentId, revision, message, final);
      if (!final) throw err;
    }
  }

  /**
   * When the document's row is gone (it, or its collection, was deleted while the job ran), the
   * chunks the job wrote go from the store it wrote them to: the catalog may not know the
   * collection any more. True when the row is gone.
   */
  private async dropWhenGone(collection: string, documentId: string, written: Written): Promise<boolean> {
    if (await this.registry.get(collection, documentId)) return false;
    if (written.to) await written.to.store.deleteDocument(written.to.config.collectionName, documentId);
    return true;
  }

  /**
   * Embeds and upserts a document's chunks in batches of INGEST_BATCH_SIZE (the next batch is
   * embedded while the one before is written), then removes its chunks past the new count.
   * `written.to` tells the caller, even when a batch fails, where chunks may have been written.
   */
  async storeChunks(
    collection: string,
    documentId: string,
    title: string,
    metadata: Record<string, MetadataValue>,
    chunks: readonly TextChunk[],
    written: Written = {},
  ): Promise<{ chunks: number; tokens: number; dimensions: number | null }> {
    let writing: Promise<void> = Promise.resolve();
    let resolved: ResolvedCollection | undefined;
    const size = this.settings.batchSize;
    try {
      for (let from = 0; from < chunks.length; from += size) {
        const batch = chunks.slice(from, from + size);
        const embedded = await this.collections.embed(
          collection,
          batch.map((c) => c.text),
        );
        await writing;
        resolved = embedded.collection;
        written.to = resolved;
        const rows: Chunk[] = batch.map((c, i) => ({
          id: `${documentId}#${from + i}`,
          collection: embedded.collection.config.collectionName,
          documentId,
          text: c.text,
          tokens: c.tokens,
          metadata: { ...metadata, title, chunkIndex: from + i },
          embedding: embedded.vectors[i],
        }));
        writing = embedded.collection.store.upsert(rows);
      }
    } finally {
      await writing.catch(() => undefined);
    }
    await writing;
    if (resolved) {
      await resolved.store.pruneDocument(
        resolved.config.collectionName,
        documentId,
        chunks.map((_, i) => `${documentId}#${i}`),
      );
    }
    return {
      chunks: chunks.length,
      tokens: chunks.reduce((sum, c) => sum + c.tokens, 0),
      dimensions: resolved?.store.dimensions ?? null,
    };
  }
}
