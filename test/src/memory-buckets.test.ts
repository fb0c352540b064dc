import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryBuckets } from '../../src/memory-buckets.js';

describe('rate-limit memory buckets', () => {
  it('lets a new key spend its burst at once, then refuses with the time the next token takes', () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 4, burst: 3 });
    for (let i = 0; i < 3; i++) expect(buckets.take('a', 1)).to.deep.equal({ ok: true });
    const refused = buckets.take('a', 1);
    expect(refused.ok).to.equal(false);
    // One token at 4 per second: 250 ms (and a millisecond's margin), less what dripped in since.
    expect(!refused.ok && refused.retryAfterMs).to.be.within(200, 251);
    expect(buckets.take('b', 1)).to.deep.equal({ ok: true });
  });

  it('charges a call its cost and refuses what the bucket cannot cover', () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 1, burst: 3 });
    expect(buckets.take('a', 3).ok).to.equal(true);
    const refused = buckets.take('a', 2);
    expect(!refused.ok && refused.retryAfterMs).to.be.within(1_900, 2_001);
  });

  it('admits again once the advertised wait has passed', async () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 10, burst: 1 });
    expect(buckets.take('a', 1).ok).to.equal(true);
    const refused = buckets.take('a', 1);
    if (refused.ok) expect.fail('the second call within the same millisecond passed');
    await sleep(refused.retryAfterMs);
    expect(buckets.take('a', 1).ok).to.equal(true);
  });

  it('charges work already done below zero, refusing until the debt is earned back', () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 10, burst: 5 });
    buckets.charge('a', 8);
    // 5 - 8 = -3: one token needs 4 more, 400 ms at 10 per second.
    const refused = buckets.take('a', 1);
    expect(!refused.ok && refused.retryAfterMs).to.be.within(350, 401);
    expect(buckets.peek('a')).to.be.within(-3, -2.5);
    expect(buckets.take('b', 5).ok).to.equal(true);
  });

  it('charges and tells how long until a whole token is back: none while one is left', () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 10, burst: 2 });
    expect(buckets.chargeAndWait('a', 1)).to.equal(0);
    // 1 - 1 = 0: a token in 100 ms (and the millisecond against early timers).
    expect(buckets.chargeAndWait('a', 1)).to.be.within(90, 101);
    // Into debt: -1 needs 2 tokens, 200 ms.
    expect(buckets.chargeAndWait('a', 1)).to.be.within(190, 201);
    expect(buckets.peek('a')).to.be.within(-1, -0.9);
    // At most a second's debt: 1 - 10 = -9, a token in a second however much is charged.
    expect(buckets.chargeAndWait('a', 1_000)).to.be.within(990, 1_001);
    expect(buckets.take('b', 2).ok).to.equal(true);
  });

  it('bounds a debt at what the rate earns back in a minute', () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 2, burst: 4 });
    buckets.charge('a', 1_000_000);
    expect(buckets.peek('a')).to.be.within(-120, -119.9);
    const refused = buckets.take('a', 1);
    expect(!refused.ok && refused.retryAfterMs).to.be.within(60_000, 60_501);
  });

  it('forgets keys whose bucket has refilled, a few at each new key, and keeps those still refilling', async () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 100, burst: 2 });
    buckets.take('a', 2);
    buckets.take('b', 1);
    // 'a' was empty when 'b' arrived: kept.
    expect(buckets.size).to.equal(2);
    await sleep(30);
    buckets.take('c', 2);
    // Both had refilled when 'c' arrived: forgotten.
    expect(buckets.size).to.equal(1);
    // A forgotten key starts again with its whole burst.
    expect(buckets.take('a', 2).ok).to.equal(true);
  });

  it('stays bounded under a stream of new keys however many arrive', async () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 1_000, burst: 1 });
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 2_000; i++) buckets.take(`${round}:${i}`, 1);
      // Every bucket refills within a millisecond at 1,000 per second.
      await sleep(5);
    }
    // Without forgetting, 10,000 keys; each new key looks at two held ones.
    expect(buckets.size).to.be.below(4_000);
  });

  it('keeps levels when resized: clamped to a smaller burst, never refilled by a larger one, then refilling at the new rate', async () => {
    const buckets = new MemoryBuckets({ ratePerSecond: 1, burst: 100 });
    buckets.take('spent', 70);
    buckets.take('drained', 100);
    buckets.resize({ ratePerSecond: 1, burst: 20 });
    expect(buckets.peek('spent')).to.be.within(20, 20);
    expect(buckets.peek('new')).to.equal(20);
    buckets.resize({ ratePerSecond: 1_000, burst: 500 });
    expect(buckets.peek('spent')).to.be.within(20, 40);
    expect(buckets.peek('drained')).to.be.below(20);
    await sleep(30);
    // 1,000 a second now: ~30 more in 30 ms.
    expect(buckets.peek('drained')).to.be.within(20, 120);
    expect(buckets.take('drained', 400).ok).to.equal(false);
  });
});
