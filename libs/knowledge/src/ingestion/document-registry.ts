import { DomainError } from '@parley/core';
import type { MetadataValue, Queryable } from '../vector-store.port';

export type DocumentStatus = 'queued' | 'ingesting' | 'ready' | 'failed';

/** A document of a collection as ingestion keeps it (kn_documents). */
export interface DocumentRecord {
  collection: string;
  documentId: string;
  title: string;
  metadata: Record<string, MetadataValue>;
  /** The uploaded file's name; null for a JSON text. */
  sourceName: string | null;
  mediaType: string;
  bytes: number;
  status: DocumentStatus;
  /** Why the last ingestion failed (or is being retried); null otherwise. */
  error: string | null;
  /** Chunks in the store now (those of the last ingestion that finished). */
  chunkCount: number;
  tokenCount: number;
  ingestedBy: string;
  createdAt: string;
  updatedAt: string;
}

/** What a new ingestion of a document sets. */
export interface QueuedDocument {
  collection: string;
  documentId: string;
  title: string;
  metadata: Record<string, MetadataValue>;
  sourceName: string | null;
  mediaType: string;
  bytes: number;
  ingestedBy: string;
  /** Names this ingestion: its job and its stored text. */
  revision: string;
  text: string;
}

interface Row {
  collection: string;
  document_id: string;
  title: string;
  metadata: Record<string, MetadataValue>;
  source_name: string | null;
  media_type: string;
  bytes: number;
  status: DocumentStatus;
  error: string | null;
  revision: string;
  chunk_count: number;
  token_count: number;
  dimensions: number | null;
  ingested_by: string;
  created_at: Date;
  updated_at: Date;
}

const toRecord = (r: Row): DocumentRecord => ({
  collection: r.collection,
  documentId: r.document_id,
  title: r.title,
  metadata: r.metadata,
  sourceName: r.source_name,
  mediaType: r.media_type,
  bytes: Number(r.bytes),
  status: r.status,
  error: r.error,
  chunkCount: Number(r.chunk_count),
  tokenCount: Number(r.token_count),
  ingestedBy: r.ingested_by,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
});

/** A document's row with what the job needs beside the public record. */
export interface StoredDocument {
  record: DocumentRecord;
  revision: string;
  /** The vector length its chunks were stored with; null before its first ingestion finished. */
  dimensions: number | null;
}

const stored = (r: Row): StoredDocument => ({ record: toRecord(r), revision: r.revision, dimensions: r.dimensions });

/** Runs `work` in one transaction when the database is a pool (a client or PGlite runs it as is). */
async function inTransaction<T>(db: Queryable, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const pool = db as Queryable & { connect?: () => Promise<Queryable & { release(): void }> };
  if (typeof pool.connect !== 'function') return work(db);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * The document registry: each collection's documents with their status and counts
 * (kn_documents), and the text a queued ingestion will chunk (kn_document_texts, removed when
 * its job ends). Document rows are keyed by the catalog code of the collection.
 */
export class DocumentRegistry {
  constructor(private readonly db: Queryable) {}

  /**
   * Records a new ingestion of a document: its row (created, or replaced but for its counts and
   * creation time, which stay until the new chunks are stored) and its text, in one transaction.
   */
  async queue(doc: QueuedDocument): Promise<DocumentRecord> {
    return inTransaction(this.db, async (tx) => {
      // The collection's catalog row is locked (key share) by the first insert: a collection
      // being deleted is waited for, and one that is gone is NOT_FOUND.
      await tx.query(
        `insert into kn_document_texts (revision, collection, document_id, text) values ($1, $2, $3, $4)`,
        [doc.revision, doc.collection, doc.documentId, doc.text],
      );
      const { rows } = await tx.query<Row>(
        `insert into kn_documents (collection, document_id, title, metadata, source_name, media_type, bytes, status,
           error, revision, ingested_by)
         values ($1, $2, $3, $4::jsonb, $5, $6, $7, 'queued', null, $8, $9)
         on conflict (collection, document_id) do update set title = excluded.title, metadata = excluded.metadata,
           source_name = excluded.source_name, media_type = excluded.media_type, bytes = excluded.bytes,
           status = 'queued', error = null, revision = excluded.revision, ingested_by = excluded.ingested_by,
           updated_at = now()
         returning *`,
        [
          doc.collection,
          doc.documentId,
          doc.title,
          JSON.stringify(doc.metadata),
          doc.sourceName,
          doc.mediaType,
          doc.bytes,
          doc.revision,
          doc.ingestedBy,
        ],
      );
      return toRecord(rows[0]);
    }).catch((err: unknown) => {
      if ((err as { code?: string }).code === '23503')
        throw DomainError.notFound('Document collection', doc.collection);
      throw err;
    });
  }

  async get(collection: string, documentId: string): Promise<StoredDocument | null> {
    const { rows } = await this.db.query<Row>(`select * from kn_documents where collection = $1 and document_id = $2`, [
      collection,
      documentId,
    ]);
    return rows[0] ? stored(rows[0]) : null;
  }

  async list(collection: string): Promise<DocumentRecord[]> {
    const { rows } = await this.db.query<Row>(
      `select * from kn_documents where collection = $1 order by created_at, document_id`,
      [collection],
    );
    return rows.map(toRecord);
  }

  async counts(collection: string): Promise<{ documents: number; chunks: number; tokens: number }> {
    const { rows } = await this.db.query<{ documents: number; chunks: number; tokens: number }>(
      `select count(*)::int as documents, coalesce(sum(chunk_count), 0)::int as chunks,
              coalesce(sum(token_count), 0)::int as tokens
       from kn_documents where collection = $1`,
      [collection],
    );
    return { documents: Number(rows[0].documents), chunks: Number(rows[0].chunks), tokens: Number(rows[0].tokens) };
  }

  /** The text of an ingestion; null when it is gone (its job ran already, or the document was deleted). */
  async text(revision: string): Promise<string | null> {
    const { rows } = await this.db.query<{ text: string }>(`select text from kn_document_texts where revision = $1`, [
      revision,
    ]);
    return rows[0]?.text ?? null;
  }

  /** Marks the ingestion `revision` as running; false when a newer one replaced it. */
  async start(collection: string, documentId: string, revision: string): Promise<boolean> {
    const { rows } = await this.db.query(
      `update kn_documents set status = 'ingesting', updated_at = now()
       where collection = $1 and document_id = $2 and revision = $3 returning 1`,
      [collection, documentId, revision],
    );
    return rows.length > 0;
  }

  /**
   * The ingestion `revision` stored its chunks: the counts now describe the store. False when the
   * document was replaced or deleted meanwhile.
   */
  async ready(
    collection: string,
    documentId: string,
    revision: string,
    counts: { chunks: number; tokens: number; dimensions: number | null },
  ): Promise<boolean> {
    const { rows } = await this.db.query(
      `update kn_documents set status = 'ready', error = null, chunk_count = $4, token_count = $5,
         dimensions = coalesce($6, dimensions), updated_at = now()
       where collection = $1 and document_id = $2 and revision = $3 returning 1`,
      [collection, documentId, revision, counts.chunks, counts.tokens, counts.dimensions],
    );
    await this.dropText(revision);
    return rows.length > 0;
  }

  /** A failed attempt: `final` marks the document failed (its earlier chunks stay); else it waits for a retry. */
  async failed(collection: string, documentId: string, revision: string, error: string, final: boolean): Promise<void> {
    await this.db.query(
      `update kn_documents set status = $4, error = $5, updated_at = now()
       where collection = $1 and document_id = $2 and revision = $3`,
      [collection, documentId, revision, final ? 'failed' : 'queued', error],
    );
    if (final) await this.dropText(revision);
  }

  async dropText(revision: string): Promise<void> {
    await this.db.query(`delete from kn_document_texts where revision = $1`, [revision]);
  }

  /** Every document of a collection with the vector length its chunks were stored with (null: none stored yet). */
  async documentsOf(collection: string): Promise<{ documentId: string; dimensions: number | null }[]> {
    const { rows } = await this.db.query<{ document_id: string; dimensions: number | null }>(
      `select document_id, dimensions from kn_documents where collection = $1`,
      [collection],
    );
    return rows.map((r) => ({
      documentId: r.document_id,
      dimensions: r.dimensions === null ? null : Number(r.dimensions),
    }));
  }

  /** Removes a document's row and any text still waiting; false when there was no such document. */
  async remove(collection: string, documentId: string): Promise<boolean> {
    return inTransaction(this.db, async (tx) => {
      await tx.query(`delete from kn_document_texts where collection = $1 and document_id = $2`, [
        collection,
        documentId,
      ]);
      const { rows } = await tx.query(
        `delete from kn_documents where collection = $1 and document_id = $2 returning 1`,
        [collection, documentId],
      );
      return rows.length > 0;
    });
  }
}
