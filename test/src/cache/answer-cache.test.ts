import { expect } from 'chai';
import { AnswerCache } from '../../../src/cache/answer-cache.js';
import type { CacheRule } from '../../../src/cache/rules.js';

const at = (key: string, number: bigint): CacheRule => ({ key, final: 'at', number });
const always = (key: string): CacheRule => ({ key, final: 'always' });
const named = (key: string): CacheRule => ({ key, final: 'blockOfAnswer' });

/** The cache, offered and answering text (the EL's bytes are ASCII here). */
function textCache(maxBytes: number) {
  const cache = new AnswerCache(maxBytes);
  return {
    offer: (rule: CacheRule, text: string, finalized: bigint | undefined, source = 'a') =>
      cache.offer(rule, Buffer.from(text), finalized, source),
    answer: (key: string, id: string | number | null) => cache.answer(key, id)?.toString(),
    clear: () => cache.clear(),
    get counts() {
      return cache.counts;
    },
  };
}

/** An answer of `n` hex zeros as the EL writes it, and what one of 100 takes in the cache (its one-letter key counted twice). */
const zeros = (n: number) => `{"jsonrpc":"2.0","id":1,"result":"0x${'0'.repeat(n)}"}`;
const ONE = zeros(100).length + 2;

/** A cache with room for `room` answers of 100 zeros, holding one under each of `keys`, offered in order. */
function holding(room: number, keys: readonly string[]) {
  const cache = textCache(room * ONE);
  for (const key of keys) cache.offer(always(key), zeros(100), undefined);
  return cache;
}

/** Which of `keys` the cache answers. */
const answered = (cache: ReturnType<typeof textCache>, keys: readonly string[]) => keys.map((key) => cache.answer(key, 1) !== undefined);

describe("answer cache: final answers kept by bytes, given with the asker's id (cache/answer-cache.ts)", () => {
  it("gives the EL's bytes with the asker's id spliced in, whatever the EL's spacing", () => {
    const cache = textCache(1 << 20);
    cache.offer(always('a'), '{"jsonrpc":"2.0","id":41,"result":{"x":"0x1"}}\n', undefined);
    expect(cache.answer('a', 7)).to.equal('{"jsonrpc":"2.0","id":7,"result":{"x":"0x1"}}\n');
    expect(cache.answer('a', 'req-"1"')).to.equal('{"jsonrpc":"2.0","id":"req-\\"1\\"","result":{"x":"0x1"}}\n');
    expect(cache.answer('a', null)).to.equal('{"jsonrpc":"2.0","id":null,"result":{"x":"0x1"}}\n');
    cache.offer(always('b'), '{ "jsonrpc": "2.0", "id": "abc", "result": "0x2" }', undefined);
    expect(cache.answer('b', 1)).to.equal('{ "jsonrpc": "2.0", "id": 1, "result": "0x2" }');
  });

  it('keeps by number only at or below the finalized head, and never errors or null results', () => {
    const cache = textCache(1 << 20);
    const ok = '{"jsonrpc":"2.0","id":1,"result":"0x5"}';
    cache.offer(at('above', 11n), ok, 10n);
    cache.offer(at('unknown', 1n), ok, undefined);
    cache.offer(at('below', 10n), ok, 10n);
    cache.offer(always('error'), '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}', 10n);
    cache.offer(always('null'), '{"jsonrpc":"2.0","id":1,"result":null}', 10n);
    expect(['above', 'unknown', 'below', 'error', 'null'].map((key) => cache.answer(key, 1) !== undefined)).to.deep.equal([
      false,
      false,
      true,
      false,
      false,
    ]);
  });

  it('keeps a transaction, receipt or logs only once every block they name is finalized', () => {
    const cache = textCache(1 << 20);
    cache.offer(named('pending'), '{"jsonrpc":"2.0","id":1,"result":{"hash":"0x1","blockNumber":null}}', 10n);
    cache.offer(named('late'), '{"jsonrpc":"2.0","id":1,"result":{"hash":"0x1","blockNumber":"0xb"}}', 10n);
    cache.offer(named('final'), '{"jsonrpc":"2.0","id":1,"result":{"hash":"0x1","blockNumber":"0xa"}}', 10n);
    cache.offer(named('no logs'), '{"jsonrpc":"2.0","id":1,"result":[]}', 10n);
    cache.offer(named('logs'), '{"jsonrpc":"2.0","id":1,"result":[{"blockNumber":"0x9"},{"blockNumber":"0xa"}]}', 10n);
    expect(['pending', 'late', 'final', 'no logs', 'logs'].map((key) => cache.answer(key, 1) !== undefined)).to.deep.equal([
      false,
      false,
      true,
      false,
      true,
    ]);
  });

  it('stays within its bytes, dropping the least recently used first', () => {
    const cache = holding(3, ['a', 'b', 'c']);
    expect(cache.answer('a', 1)).to.be.a('string');
    cache.offer(always('d'), zeros(100), undefined);
    expect(answered(cache, ['a', 'b', 'c', 'd'])).to.deep.equal([true, false, true, true]);
    expect(cache.counts).to.include({ evictions: 1, entries: 3, bytes: 3 * ONE });
    cache.offer(always('huge'), zeros(10 * ONE), undefined);
    expect(cache.counts.bytes).to.be.at.most(3 * ONE);
    cache.clear();
    expect(cache.counts).to.include({ bytes: 0, entries: 0 });
  });

  it("keeps the order of use to within half of a holder's answers: one used in the newer half is not moved", () => {
    const cache = holding(4, ['a', 'b', 'c', 'd']);
    // c is in the newer half: it stays third. a is not: it goes last.
    expect([cache.answer('c', 1), cache.answer('a', 1)].every((answer) => typeof answer === 'string')).to.equal(true);
    for (const key of ['e', 'f']) cache.offer(always(key), zeros(100), undefined);
    expect(answered(cache, ['a', 'b', 'c', 'd', 'e', 'f'])).to.deep.equal([true, false, false, true, true, true]);
  });

  it('counts a move: an answer moved once and used again soon after stays in the newer half where it went', () => {
    const cache = holding(4, ['a', 'b', 'c', 'd']);
    expect(cache.answer('a', 1)).to.be.a('string');
    cache.offer(always('e'), zeros(100), undefined);
    // c, d, a, e: a used again stays before e, and goes before it.
    expect(cache.answer('a', 1)).to.be.a('string');
    for (const key of ['f', 'g', 'h']) cache.offer(always(key), zeros(100), undefined);
    expect(answered(cache, ['a', 'e'])).to.deep.equal([false, true]);
  });

  it('takes space back from the source holding the most: one filling the cache evicts its own answers', () => {
    const text = (n: number) => `{"jsonrpc":"2.0","id":1,"result":"0x${n.toString(16).padStart(100, '0')}"}`;
    const one = text(0).length + 2 * 'k000'.length;
    const cache = textCache(10 * one);
    for (let i = 0; i < 3; i++) cache.offer(always(`v00${i}`), text(i), undefined, 'victim');
    for (let i = 0; i < 1000; i++) cache.offer(always(`k${String(i).padStart(3, '0')}`), text(i), undefined, 'flood');
    expect(
      ['v000', 'v001', 'v002'].map((key) => cache.answer(key, 1) !== undefined),
      "the victim's answers",
    ).to.deep.equal([true, true, true]);
    expect(cache.answer('k999', 1), "the flood's latest").to.be.a('string');
    expect(cache.answer('k000', 1), "the flood's first").to.equal(undefined);
    expect(cache.counts.bytes).to.be.at.most(10 * one);
  });

  it('names an answer for the fleet once, when a source other than the one that kept it reads it', () => {
    const cache = new AnswerCache(1 << 20);
    const text = (id: number) => Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":"0x1"}`);
    cache.offer(always('k'), text(1), undefined, 'reader');
    expect(cache.shareNow('k', 'reader'), 'the source that kept it').to.equal(false);
    expect(cache.shareNow('k', 'other'), 'a second source').to.equal(true);
    expect(cache.shareNow('k', 'third'), 'once').to.equal(false);
    expect(cache.shareNow('absent', 'other')).to.equal(false);
    cache.keep(always('from-fleet'), text(2), 'reader');
    expect(cache.shareNow('from-fleet', 'other'), 'read from the fleet already').to.equal(false);
  });
});
