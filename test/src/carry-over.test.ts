import { expect } from 'chai';
import { CarryOver } from '../../src/carry-over.js';

describe('carry-over across reloads', () => {
  it('makes what the first runtime keeps, and hands the same object to the next one', () => {
    const first = new CarryOver();
    const window = first.keep('gate:ledger', () => new Map([['0xaa', 1]]));
    const next = new CarryOver(first.kept);
    expect(next.keep('gate:ledger', () => new Map())).to.equal(window);
  });

  it('lets the carried object adopt the new numbers only on commit, never for a runtime that failed to build', () => {
    const adopted: number[] = [];
    const first = new CarryOver();
    first.keep('rate-limit:reads:source', () => ({ burst: 10 }));
    const failed = new CarryOver(first.kept);
    failed.keep(
      'rate-limit:reads:source',
      () => ({ burst: 5 }),
      (kept) => adopted.push(kept.burst),
    );
    expect(adopted).to.deep.equal([]);
    const next = new CarryOver(first.kept);
    const kept = next.keep(
      'rate-limit:reads:source',
      () => ({ burst: 5 }),
      (state) => (state.burst = 5),
    );
    next.commit();
    expect(kept.burst).to.equal(5);
    next.commit();
    expect(first.kept.get('rate-limit:reads:source')).to.equal(kept);
  });

  it('does not call adopt for a new object (made with the new numbers already)', () => {
    let adopted = false;
    const carry = new CarryOver();
    carry.keep(
      'x',
      () => ({}),
      () => (adopted = true),
    );
    carry.commit();
    expect(adopted).to.equal(false);
  });

  it('drops what the next runtime does not keep (a plugin switched off)', () => {
    const first = new CarryOver();
    first.keep('rate-limit:in-flight', () => new Map());
    const next = new CarryOver(first.kept);
    expect([...next.kept.keys()]).to.deep.equal([]);
    expect(new CarryOver(next.kept).keep('rate-limit:in-flight', () => new Map([['a', 1]])).size).to.equal(1);
  });

  it('shares one object between two keeps of one key within a runtime', () => {
    const carry = new CarryOver();
    const a = carry.keep('k', () => ({}));
    expect(carry.keep('k', () => ({}))).to.equal(a);
  });
});
