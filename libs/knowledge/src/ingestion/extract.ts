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
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'th'].map((selector) => ({ selector, ...plain })),
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
    ],
  });
}

/** The pages' text of a PDF (pdf.js through unpdf), a blank line between pages. */
async function pdfText(file: SourceFile): Promise<string> {
  const { getDocumentProxy, extractText } = await import('unpdf');
  let text: string[];
  try {
    // pdf.js may detach the buffer it is given: it gets a copy.
    const pdf = await getDocumentProxy(new Uint8Array(file.bytes), { verbosity: 0 });
    try {
      text = (await extractText(pdf, { mergePages: false })).text;
    } finally {
      await pdf.loadingTask.destroy();
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw refuse(file.fileName, `is not a readable PDF (${reason.replace(/\.$/, '')})`);
  }
  return text.join('\n\n');
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
