import { PDFDocument, StandardFonts } from 'pdf-lib';
import { extractText, mediaTypeOf } from './extract';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('extractText: the text of an uploaded file, or a refusal naming it', () => {
  it('reads text, Markdown, HTML (without tags, scripts or upper-cased headings) and a PDF drawn here', async () => {
    expect(await extractText({ fileName: 'a.txt', bytes: bytes('\uFEFFplain text') })).toEqual({
      mediaType: 'text/plain',
      text: 'plain text',
    });
    expect((await extractText({ fileName: 'b.md', bytes: bytes('# Title\n\nBody.') })).mediaType).toBe('text/markdown');
    const html = await extractText({
      fileName: 'c.html',
      bytes: bytes('<h1>Opening hours</h1><p>Nine to <b>five</b>.</p><script>alert(1)</script>'),
    });
    expect(html).toEqual({ mediaType: 'text/html', text: 'Opening hours\n\nNine to five.' });
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc.addPage().drawText('Invoices are emailed after dispatch.', { x: 50, y: 700, font, size: 12 });
    doc.addPage().drawText('Second page.', { x: 50, y: 700, font, size: 12 });
    const pdf = await extractText({ fileName: 'd.pdf', bytes: await doc.save() });
    expect(pdf).toEqual({ mediaType: 'application/pdf', text: 'Invoices are emailed after dispatch.\n\nSecond page.' });
  });

  it('takes the type from the extension, else from the media type sent; refuses others naming the file', async () => {
    expect(mediaTypeOf({ fileName: 'README', mediaType: 'text/markdown; charset=utf-8' })).toBe('text/markdown');
    expect(() => mediaTypeOf({ fileName: 'x.docx', mediaType: 'application/octet-stream' })).toThrow(
      /x\.docx' is not a supported type/,
    );
    const refusals: [string, Uint8Array, RegExp][] = [
      ['empty.md', new Uint8Array(), /empty\.md' is empty/],
      ['blank.txt', bytes(' \n '), /blank\.txt' has no text/],
      ['bad.txt', new Uint8Array([0xff, 0xfe, 0x00, 0xd8]), /bad\.txt' is not UTF-8/],
      ['broken.pdf', bytes('%PDF-1.4 nothing'), /broken\.pdf' is not a readable PDF/],
      ['scan.pdf', await (await PDFDocument.create()).save(), /scan\.pdf' has no text/],
    ];
    const blank = await PDFDocument.create();
    blank.addPage();
    refusals[4][1] = await blank.save();
    for (const [fileName, data, message] of refusals) {
      await expect(extractText({ fileName, bytes: data })).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        message: expect.stringMatching(message),
        details: { problems: [{ path: 'file', message: expect.stringContaining(fileName) }] },
      });
    }
  });
});
