import { DomainError, type FieldProblem } from '@parley/core';
import type { Chunk, SearchQuery } from './vector-store.port';

const MAX_TOP_K = 1000;

function checkVector(vector: unknown, dimensions: number, path: string, problems: FieldProblem[]): void {
  if (!Array.isArray(vector) || vector.length !== dimensions) {
    problems.push({ path, message: `must be an array of ${dimensions} numbers` });
  } else if (!vector.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    problems.push({ path, message: 'must hold finite numbers only' });
  } else if (vector.every((v) => v === 0)) {
    problems.push({ path, message: 'must not be all zeros (it has no direction)' });
  }
}

const text = (v: unknown) => typeof v === 'string' && v.length > 0;

function checkMetadata(metadata: unknown, path: string, problems: FieldProblem[]): void {
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
    problems.push({ path, message: 'must be an object' });
    return;
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
      problems.push({ path: `${path}.${key}`, message: 'must be a string, number, boolean or null' });
    }
  }
}

/** Every problem of a batch of chunks, before anything is written. */
export function assertChunks(chunks: readonly Chunk[], dimensions: number): void {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  chunks.forEach((c, i) => {
    const at = `chunks[${i}]`;
    if (!text(c.id)) problems.push({ path: `${at}.id`, message: 'is required' });
    if (!text(c.collection)) problems.push({ path: `${at}.collection`, message: 'is required' });
    if (!text(c.documentId)) problems.push({ path: `${at}.documentId`, message: 'is required' });
    if (typeof c.text !== 'string') problems.push({ path: `${at}.text`, message: 'must be a string' });
    if (!Number.isInteger(c.tokens) || c.tokens < 0) {
      problems.push({ path: `${at}.tokens`, message: 'must be a whole number ≥ 0' });
    }
    checkMetadata(c.metadata, `${at}.metadata`, problems);
    checkVector(c.embedding, dimensions, `${at}.embedding`, problems);
    const key = `${c.collection}\u0000${c.id}`;
    if (seen.has(key)) problems.push({ path: `${at}.id`, message: 'appears twice in the batch' });
    seen.add(key);
  });
  if (problems.length > 0) throw DomainError.validation(problems, 'The chunks are not valid; none was stored.');
}

export function assertQuery(query: SearchQuery, dimensions: number): void {
  const problems: FieldProblem[] = [];
  if (!text(query.collection)) problems.push({ path: 'collection', message: 'is required' });
  checkVector(query.vector, dimensions, 'vector', problems);
  if (!Number.isInteger(query.topK) || query.topK < 1 || query.topK > MAX_TOP_K) {
    problems.push({ path: 'topK', message: `must be a whole number from 1 to ${MAX_TOP_K}` });
  }
  const { threshold } = query;
  if (threshold !== undefined && !(typeof threshold === 'number' && threshold >= -1 && threshold <= 1)) {
    problems.push({ path: 'threshold', message: 'must be a number from -1 to 1' });
  }
  if (query.filter !== undefined) checkMetadata(query.filter, 'filter', problems);
  if (problems.length > 0) throw DomainError.validation(problems, 'The search is not valid.');
}

export const norm = (v: readonly number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
