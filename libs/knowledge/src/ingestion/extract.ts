import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DomainError } from '@parley/core';

/** The kinds of file a collection takes, by media type. */
export const MEDIA_TYPES = {
  'text/plain': ['.txt', '.text'],
  'text/markdown': ['.md', '.markdown'],
  'text/html': ['.html', '.htm'],
  'application/pdf': ['.pdf'],
} as const;

export type MediaType = keyof typeof MEDIA_TYPES;

/** A file as it arrived: its name, the media type it was sent with (if any) and its bytes. */
export interface SourceFile {
  fileName: string;
  mediaType?: string;
  bytes: Uint8Array;
}

export interface ExtractedText {
  mediaType: MediaType;
  text: string;
}

const refuse = (fileName: string, message: string) =>
  DomainError.validation([{ path: 'file', message: `${fileName}: ${message}` }], `File '${fileName}' ${message}.`);

const EXTENSIONS = Object.entries(MEDIA_TYPES).flatMap(([type, exts]) =>
  exts.map((ext) => [ext, type as MediaType] as const),
);

/**
 * The media type of a file: from its extension, else from the type it was sent with.
 * VALIDATION_FAILED naming the file when it is neither text, Markdown, HTML nor PDF.
 */
export function mediaTypeOf(file: Pick<SourceFile, 'fileName' | 'mediaType'>): MediaType {
  const name = file.fileName.toLowerCase();
  const byName = EXTENSIONS.find(([ext]) => name.endsWith(ext));
  if (byName) return byName[1];
  const sent = file.mediaType?.split(';')[0].trim().toLowerCase();
  if (sent && sent in MEDIA_TYPES) return sent as MediaType;
  throw refuse(
    file.fileName,
    `is not a supported type (${EXTENSIONS.map(([ext]) => ext).join(', ')}; got ${file.mediaType ?? 'no media type'})`,
  );
}

function utf8(file: SourceFile): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(file.bytes).replace(/^\uFEFF/, '');
  } catch {
    throw refuse(file.fileName, 'is not UTF-8 text');
  }
}

async function htmlText(html: string): Promise<string> {
  const { convert } = await import('html-to-text');
  const plain = { options: { uppercase: false } };
  return convert(html, {
    wordwrap: false,
    selectors: [
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'heading', ...plain })),
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
    ],
  });
}

/** How long pdf.js may take over one file. */
const PDF_TIMEOUT_MS = 30_000;

/** Runs in the worker thread: unpdf's text of each page, or the error's message. */
const PDF_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  try {
    const { getDocumentProxy, extractText } = await import(workerData.unpdf);
    const pdf = await getDocumentProxy(workerData.bytes, { verbosity: 0 });
    const { text } = await extractText(pdf, { mergePages: false });
    await pdf.loadingTask.destroy();
    parentPort.postMessage({ text });
  } catch (err) {
    parentPort.postMessage({ error: err && err.message ? err.message : String(err) });
  }
})();
`;

/**
 * The pages' text of a PDF (pdf.js through unpdf), a blank line between pages. pdf.js runs in a
 * worker thread: a large or hostile file neither blocks the event loop nor runs past
 * PDF_TIMEOUT_MS, and unpdf loads its ES-module bundle with Node's own loader.
 */
async function pdfText(file: SourceFile): Promise<string> {
  const unpdf = pathToFileURL(join(dirname(require.resolve('unpdf')), 'index.mjs')).href;
  const worker = new Worker(PDF_WORKER, {
    eval: true,
    workerData: { unpdf, bytes: new Uint8Array(file.bytes) },
    resourceLimits: { maxOldGenerationSizeMb: 512 },
    stdout: true,
    stderr: true,
  });
  const outcome = await new Promise<{ text?: string[]; error?: string }>((resolve) => {
    const timer = setTimeout(() => resolve({ error: `no text after ${PDF_TIMEOUT_MS / 1000} s` }), PDF_TIMEOUT_MS);
    worker.once('message', (m: { text?: string[]; error?: string }) => {
      clearTimeout(timer);
      resolve(m);
    });
    worker.once('error', (err) => {
      clearTimeout(timer);
      resolve({ error: err.message });
    });
    worker.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ error: `pdf.js stopped (exit ${code})` });
    });
  });
  await worker.terminate();
  if (outcome.error !== undefined || !outcome.text)
    throw refuse(file.fileName, `is not a readable PDF (${(outcome.error ?? 'no text').replace(/\.$/, '')})`);
  return outcome.text.join('\n\n');
}

/**
 * The text of an uploaded file. Refuses, naming the file, what cannot be ingested: an unknown
 * type, bytes that are not UTF-8 text, a PDF pdf.js cannot open, and a file with no text at all
 * (empty, blank, or a PDF of scanned pages).
 */
export async function extractText(file: SourceFile): Promise<ExtractedText> {
  const mediaType = mediaTypeOf(file);
  if (file.bytes.byteLength === 0) throw refuse(file.fileName, 'is empty');
  let text: string;
  if (mediaType === 'application/pdf') text = await pdfText(file);
  else if (mediaType === 'text/html') text = await htmlText(utf8(file));
  else text = utf8(file);
  if (text.trim().length === 0) {
    throw refuse(
      file.fileName,
      mediaType === 'application/pdf' ? 'has no text to extract (scanned pages need OCR first)' : 'has no text',
    );
  }
  return { mediaType, text };
}
