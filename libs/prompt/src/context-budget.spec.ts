import { CONTEXT_HEADER, fitContext, mergeAdjacent, renderContext, type ContextChunk } from './context-budget';
import { countTokens } from './token-count';

const count = (text: string) => countTokens(text, 'sim-chat');

const chunk = (documentId: string, position: number, score: number, text: string, title?: string): ContextChunk => ({
  id: `${documentId}#${position}`,
  documentId,
  position,
  text,
  score,
  source: 'FAQ',
  ...(title ? { title } : {}),
});

describe('the context block and its budget', () => {
  it('keeps every chunk without a budget, best block first, each under its source label', () => {
    const fitted = fitContext(
      [
        chunk('refunds', 0, 0.5, 'Refunds take five days.', 'Refund policy'),
        chunk('shipping', 3, 0.9, 'Parcels ship on Mondays.'),
      ],
      { maxTokens: null, countTokens: count },
    );
    expect(fitted.kept.map((c) => c.id)).toEqual(['shipping#3', 'refunds#0']);
    expect(fitted.dropped).toEqual([]);
    expect(fitted.text).toBe(
      [
        CONTEXT_HEADER,
        '[Source: document shipping, FAQ]\nParcels ship on Mondays.',
        '[Source: Refund policy (document refunds, FAQ)]\nRefunds take five days.',
      ].join('\n\n'),
    );
    expect(fitted.tokens).toBe(count(fitted.text!));
  });

  it('merges adjacent chunks of one document into one block in document order, scored by its best chunk', () => {
    const blocks = mergeAdjacent([
      chunk('manual', 5, 0.8, 'five'),
      chunk('manual', 4, 0.6, 'four'),
      chunk('manual', 7, 0.7, 'seven'),
      chunk('other', 6, 0.75, 'other six'),
    ]);
    expect(blocks.map((b) => [b.documentId, b.chunkIds, b.text, b.score])).toEqual([
      ['manual', ['manual#4', 'manual#5'], 'four\nfive', 0.8],
      ['other', ['other#6'], 'other six', 0.75],
      ['manual', ['manual#7'], 'seven', 0.7],
    ]);
  });

  it('does not merge chunks of different sources, nor chunks without a position', () => {
    const a = { ...chunk('doc', 0, 0.9, 'a'), source: 'A' };
    const b = { ...chunk('doc', 1, 0.8, 'b'), source: 'B' };
    const { position: _p, ...unplaced } = chunk('doc', 1, 0.7, 'c');
    expect(mergeAdjacent([a, b, { ...unplaced, id: 'doc#x', source: 'A' }]).map((x) => x.chunkIds)).toEqual([
      ['doc#0'],
      ['doc#1'],
      ['doc#x'],
    ]);
  });

  it('drops the lowest scores first until the block fits, and says what it dropped', () => {
    const long = (word: string) => Array.from({ length: 60 }, () => word).join(' ');
    const chunks = [
      chunk('a', 0, 0.9, long('alpha')),
      chunk('b', 0, 0.5, long('beta')),
      chunk('c', 0, 0.7, long('gamma')),
    ];
    const all = fitContext(chunks, { maxTokens: null, countTokens: count });
    const budget = all.tokens - 10;
    const fitted = fitContext(chunks, { maxTokens: budget, countTokens: count });
    expect(fitted.kept.map((c) => c.id)).toEqual(['a#0', 'c#0']);
    expect(fitted.dropped).toEqual([{ id: 'b#0', documentId: 'b', score: 0.5, reason: 'budget' }]);
    expect(fitted.tokens).toBeLessThanOrEqual(budget);
    expect(fitted.tokens).toBe(count(fitted.text!));

    const tight = fitContext(chunks, { maxTokens: 100, countTokens: count });
    expect(tight.kept.map((c) => c.id)).toEqual(['a#0']);
    expect(tight.dropped.map((d) => d.id)).toEqual(['b#0', 'c#0']);
    expect(tight.tokens).toBeLessThanOrEqual(100);
  });

  it('keeps nothing when even the best chunk does not fit, or the budget is gone', () => {
    const chunks = [chunk('a', 0, 0.9, 'one two three four five six seven eight nine ten')];
    for (const maxTokens of [5, 0, -40]) {
      const fitted = fitContext(chunks, { maxTokens, countTokens: count });
      expect(fitted).toMatchObject({ blocks: [], kept: [], text: null, tokens: 0 });
      expect(fitted.dropped.map((d) => d.id)).toEqual(['a#0']);
    }
  });

  it('splits a merged block again when a chunk in its middle is dropped', () => {
    const chunks = [
      chunk('m', 0, 0.9, 'zero'),
      chunk('m', 1, 0.1, Array.from({ length: 80 }, () => 'filler').join(' ')),
      chunk('m', 2, 0.8, 'two'),
    ];
    const fitted = fitContext(chunks, { maxTokens: 60, countTokens: count });
    expect(fitted.dropped.map((d) => d.id)).toEqual(['m#1']);
    expect(fitted.blocks.map((b) => b.chunkIds)).toEqual([['m#0'], ['m#2']]);
  });

  it("serves seed 004's caller chunks: no scores (the given order ranks), page ranges merged into the label", () => {
    const fitted = fitContext(
      [
        { id: 'sec_ldap', documentId: 'doc_123', position: 6, text: 'LDAP setup, part one.', pageStart: 6, pageEnd: 6 },
        { id: 'sec_ldap2', documentId: 'doc_123', position: 7, text: 'LDAP setup, part two.', pageStart: 7 },
        { id: 'sec_sso', documentId: 'doc_9', text: 'SSO is elsewhere.' },
      ],
      { maxTokens: null, countTokens: count },
    );
    expect(fitted.blocks.map((b) => [b.chunkIds, b.score, b.pageStart, b.pageEnd])).toEqual([
      [['sec_ldap', 'sec_ldap2'], null, 6, 7],
      [['sec_sso'], null, undefined, undefined],
    ]);
    expect(fitted.text).toContain(
      '[Source: document doc_123, pages 6–7]\nLDAP setup, part one.\nLDAP setup, part two.',
    );
    const trimmed = fitContext(fitted.kept, { maxTokens: fitted.tokens - 1, countTokens: count });
    expect(trimmed.dropped.map((d) => d.id)).toEqual(['sec_sso']);
  });

  it('adds up the chunks’ own token counts when all have one: an upper bound of the count, without tokenizing the block', () => {
    const texts = [
      'The Zephyr kettle warranty lasts seven years.',
      'Claims need the receipt.\nAnd the serial number.',
      'Descale monthly; use white vinegar!',
      'Orders ship from Lisbon.',
    ];
    const chunks = texts.map((text, i) => ({
      ...chunk(i < 2 ? 'manual' : `doc${i}`, i, 0.9 - i / 10, text, i < 2 ? 'Manual' : undefined),
      tokens: count(text),
    }));
    const counted: string[] = [];
    const spy = (text: string) => (counted.push(text), count(text));
    const all = fitContext(chunks, { maxTokens: null, countTokens: spy });
    expect(counted).not.toContain(all.text);
    expect(all.tokens).toBeGreaterThanOrEqual(count(all.text!));
    expect(all.tokens).toBeLessThanOrEqual(count(all.text!) + 20);
    for (let maxTokens = all.tokens; maxTokens > 0; maxTokens -= 7) {
      const fitted = fitContext(chunks, { maxTokens, countTokens: count });
      expect(fitted.text === null ? 0 : count(fitted.text)).toBeLessThanOrEqual(maxTokens);
      expect(fitted.kept.length + fitted.dropped.length).toBe(4);
    }
  });

  it('keeps a repeated chunk id once', () => {
    const c = chunk('a', 0, 0.9, 'same');
    expect(fitContext([c, c], { maxTokens: null, countTokens: count }).kept).toHaveLength(1);
    expect(renderContext([], 'H')).toBe('H');
  });
});
