import { expect } from 'chai';
import { BodyBudget, SMALL_BODY_BYTES, SOURCE_SHARE } from '../../src/body-budget.js';

const KiB = 1024;

describe('body budget', () => {
  it('takes declared lengths up to the limit and refuses one that does not fit, charging nothing for it', () => {
    const budget = new BodyBudget();
    expect(budget.take(600 * KiB, 1_000 * KiB)).to.be.a('function');
    expect(budget.take(401 * KiB, 1_000 * KiB)).to.equal('all');
    expect(budget.inFlight).to.equal(600 * KiB);
    expect(budget.take(400 * KiB, 1_000 * KiB)).to.be.a('function');
    expect(budget.inFlight).to.equal(1_000 * KiB);
  });

  it('gets the bytes back once, however often the release is called', () => {
    const budget = new BodyBudget();
    const release = budget.take(700 * KiB, 1_000 * KiB) as () => void;
    release();
    release();
    expect(budget.inFlight).to.equal(0);
    expect(budget.take(1_000 * KiB, 1_000 * KiB)).to.be.a('function');
  });

  it('never refuses a request without a body, nor a body of 64 KiB or less (an ML-DSA transfer is ~22 KB of hex), even with the budget spent', () => {
    const budget = new BodyBudget();
    budget.take(1_000 * KiB, 1_000 * KiB);
    expect(SMALL_BODY_BYTES).to.equal(64 * KiB);
    expect(budget.take(0, 1_000 * KiB, 'b')).to.be.a('function');
    expect(budget.take(SMALL_BODY_BYTES, 1_000 * KiB, 'a')).to.be.a('function');
    expect(budget.take(SMALL_BODY_BYTES + 1, 1_000 * KiB, 'b')).to.equal('all');
    expect(budget.inFlight).to.equal(1_000 * KiB + SMALL_BODY_BYTES);
  });

  it('reads the limit per call: a lower one (after a reload) refuses until enough is given back', () => {
    const budget = new BodyBudget();
    const release = budget.take(800 * KiB, 1_000 * KiB) as () => void;
    expect(budget.take(100 * KiB, 500 * KiB)).to.equal('all');
    release();
    expect(budget.take(100 * KiB, 500 * KiB)).to.be.a('function');
  });

  it(`holds one source to 1/${SOURCE_SHARE} of the limit (at least one largest body), others going on, a trusted proxy (null) not`, () => {
    const budget = new BodyBudget();
    const limit = 8 * 512 * KiB;
    expect(budget.take(512 * KiB, limit, 'a', 512 * KiB)).to.be.a('function');
    expect(budget.take(65 * KiB, limit, 'a', 512 * KiB)).to.equal('source');
    expect(budget.take(512 * KiB, limit, 'b', 512 * KiB)).to.be.a('function');
    const proxy = [1, 2, 3].map(() => budget.take(512 * KiB, limit, null, 512 * KiB));
    expect(proxy.every((release) => typeof release === 'function')).to.equal(true);
    // The share is at least one body of the largest size, whatever the limit.
    expect(new BodyBudget().take(512 * KiB, 1_024 * KiB, 'c', 512 * KiB)).to.be.a('function');
  });

  it("gives a source's share back with its bytes", () => {
    const budget = new BodyBudget();
    const release = budget.take(512 * KiB, 4_096 * KiB, 'a', 512 * KiB) as () => void;
    expect(budget.take(512 * KiB, 4_096 * KiB, 'a', 512 * KiB)).to.equal('source');
    release();
    expect(budget.take(512 * KiB, 4_096 * KiB, 'a', 512 * KiB)).to.be.a('function');
  });

  it("gives back only the bytes of the body released: the source's other body still counts against its share", () => {
    const budget = new BodyBudget();
    const limit = 8 * 512 * KiB;
    const first = budget.take(256 * KiB, limit, 'a', 512 * KiB) as () => void;
    expect(budget.take(256 * KiB, limit, 'a', 512 * KiB)).to.be.a('function');
    first();
    expect(budget.take(257 * KiB, limit, 'a', 512 * KiB), '256 KiB still held').to.equal('source');
    expect(budget.take(256 * KiB, limit, 'a', 512 * KiB)).to.be.a('function');
  });
});
