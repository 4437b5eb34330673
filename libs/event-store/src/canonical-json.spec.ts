import type { FieldProblem } from '@parley/core';
import { canonicalJson } from './canonical-json';
import { canonicalEvent, chainHash, GENESIS_HASH } from './hash-chain';

describe('canonicalJson', () => {
  it('sorts keys recursively and drops whitespace, whatever the insertion order', () => {
    const a = canonicalJson({ b: 1, a: { d: [1, { z: 0, y: 'é' }], c: null } }, 'x', []);
    const b = canonicalJson({ a: { c: null, d: [1, { y: 'é', z: 0 }] }, b: 1 }, 'x', []);
    expect(a).toBe('{"a":{"c":null,"d":[1,{"y":"é","z":0}]},"b":1}');
    expect(b).toBe(a);
  });

  it('collects every problem with its path instead of stopping at the first', () => {
    const problems: FieldProblem[] = [];
    expect(canonicalJson({ list: [1, undefined], n: -Infinity }, 'data', problems)).toBeNull();
    expect(problems).toEqual([
      { path: 'data.list[1]', message: 'undefined is not JSON' },
      { path: 'data.n', message: '-Infinity is not a JSON number' },
    ]);
  });

  it('accepts a shared (non-circular) object twice', () => {
    const shared = { k: 1 };
    expect(canonicalJson({ a: shared, b: shared }, 'x', [])).toBe('{"a":{"k":1},"b":{"k":1}}');
  });
});

describe('hash chain', () => {
  it('hashes the previous hash and the canonical event, so any field change changes the hash', () => {
    const parts = {
      streamId: 's-1',
      revision: 0n,
      eventId: '0190f1e2-0000-7000-8000-000000000001',
      type: 'T',
      schemaVersion: 1,
      dataJson: '{"a":1}',
      metadataJson: '{}',
    };
    expect(canonicalEvent(parts)).toBe(
      '{"data":{"a":1},"eventId":"0190f1e2-0000-7000-8000-000000000001","metadata":{},"revision":0,' +
        '"schemaVersion":1,"streamId":"s-1","type":"T"}',
    );
    const hash = chainHash(GENESIS_HASH, canonicalEvent(parts));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(chainHash(GENESIS_HASH, canonicalEvent({ ...parts, revision: 1n }))).not.toBe(hash);
    expect(chainHash('1'.repeat(64), canonicalEvent(parts))).not.toBe(hash);
  });
});
