/**
 * One kind of bucket, in its three homes: this process (synchronous), a fleet (every instance's
 * own buckets kept in step through a real redis-server, through the real Fleet, deciding alone
 * while Redis is down), and the primary process of `workers: N` (hostedBucket, and the call the
 * bucket makes to it). The
 * plugin's use of buckets over HTTP is test/plugins/rate-limit/index.test.ts; two processes
 * sharing Redis, test/src/fleet.test.ts; the IPC to the primary, test/src/cluster/calls.test.ts.
 */
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { Bucket, hostedBucket, type BucketSpec, type Consumed } from '../../../plugins/rate-limit/bucket.js';
import { SyncState } from '../../../plugins/rate-limit/fleet-sync.js';
import { MemoryBuckets } from '../../../src/plugin.js';
import { rateLimit } from '../../../plugins/rate-limit/index.js';
import { Fleet } from '../../../src/fleet.js';
import { createLogger } from '../../../src/log.js';
import type { PrimaryCall, SharedState } from '../../../src/plugin.js';
import { within } from '../../../support/within.js';
import { startRedis, type RedisServer } from '../../helpers/redis.js';

const log = createLogger('error');
const memory = () => new Fleet({ store: 'memory', redisUrl: undefined }, log);

/** A take from a bucket in this process: answered before consume returns. */
function takeNow(bucket: Bucket, key: string, cost: number): Consumed {
  const consumed = bucket.consume(key, cost, (c) => c);
  if (consumed instanceof Promise) throw new Error('expected a synchronous answer');
  return consumed;
}
/**
 * The next `event` of a Redis client. Not events.once: that rejects on the 'error' events ioredis
 * emits for each failed reconnect while Redis is down.
 */
const next = (fleet: Fleet, event: 'ready' | 'close') => new Promise<void>((resolve) => fleet.redis!.once(event, () => resolve()));
const oks = (outcomes: readonly Consumed[]) => outcomes.map((c) => c.ok);
const waitOf = (consumed: Consumed | undefined) => {
  if (consumed === undefined || consumed.ok) throw new Error(`expected a refusal, got ${JSON.stringify(consumed)}`);
  return consumed.retryAfterMs;
};

describe('rate-limit bucket', () => {
  describe('in this process (one process, no Redis)', () => {
    it('answers synchronously: `then` runs before consume returns, and consume returns what it returned', () => {
      const bucket = new Bucket('reads:source', { ratePerSecond: 1, burst: 1 }, memory());
      const order: string[] = [];
      const first = bucket.consume('10.0.0.1', 1, (consumed) => {
        order.push(`then ${consumed.ok}`);
        return 'first';
      });
      order.push('returned');
      expect(order).to.deep.equal(['then true', 'returned']);
      expect(first).to.equal('first');
      const second = bucket.consume('10.0.0.1', 1, (consumed) => consumed);
      expect(second).to.not.be.instanceOf(Promise);
      expect(second).to.have.property('ok', false);
    });

    it('lets a new source send its burst at once, then refuses it until the next token, saying when', () => {
      const bucket = new Bucket('reads:source', { ratePerSecond: 2, burst: 3 }, memory());
      const outcomes = [1, 1, 1, 1].map((cost) => takeNow(bucket, '10.0.0.1', cost));
      expect(oks(outcomes)).to.deep.equal([true, true, true, false]);
      // One token at 2 a second: 500 ms, plus the one the bucket adds against early timers.
      expect(waitOf(outcomes[3])).to.be.within(250, 501);
    });

    it('takes each cost whole, and a cost it refuses takes nothing', () => {
      const bucket = new Bucket('reads:source', { ratePerSecond: 1, burst: 4 }, memory());
      const outcomes = [2, 1, 2, 1, 1].map((cost) => takeNow(bucket, '10.0.0.1', cost));
      expect(oks(outcomes)).to.deep.equal([true, true, false, true, false]);
    });

    it('charges work already done into debt, synchronously, and refuses the source until it is earned back', () => {
      const bucket = new Bucket('submissions:source', { ratePerSecond: 10, burst: 2 }, memory());
      expect(bucket.charge('10.0.0.1', 7)).to.equal(undefined);
      // 2 - 7 = -5: the next token in 600 ms at 10 a second.
      expect(waitOf(takeNow(bucket, '10.0.0.1', 1))).to.be.within(550, 601);
      expect(takeNow(bucket, '10.0.0.2', 1).ok).to.equal(true);
    });

    it('keeps one bucket per key', () => {
      const bucket = new Bucket('reads:source', { ratePerSecond: 1, burst: 1 }, memory());
      expect(bucket.consume('10.0.0.1', 1, (c) => c.ok)).to.equal(true);
      expect(bucket.consume('10.0.0.1', 1, (c) => c.ok)).to.equal(false);
      expect(bucket.consume('10.0.0.2', 1, (c) => c.ok)).to.equal(true);
    });
  });

  describe('in a fleet (store: redis): every instance decides alone, in step through Redis', () => {
    let redis: RedisServer;
    let fleet: Fleet;
    /** A second instance of the fleet on the same Redis. */
    let other: Fleet;
    let names = 0;
    /** A bucket name of its own for each test: Redis keeps buckets between tests. */
    const fresh = () => `test${++names}:source`;

    before(async () => {
      redis = await startRedis();
      fleet = new Fleet({ store: 'redis', redisUrl: redis.url }, log);
      other = new Fleet({ store: 'redis', redisUrl: redis.url }, log);
      await within(5_000, 'both Redis clients ready', Promise.all([next(fleet, 'ready'), next(other, 'ready')]));
    });
    after(async () => {
      await fleet?.close();
      await other?.close();
      await redis?.stop();
    });

    /** EVAL calls Redis has answered so far (INFO commandstats). */
    const evalCalls = async () => Number(/cmdstat_eval:calls=(\d+)/.exec(await fleet.redis!.info('commandstats'))?.[1] ?? 0);
    /** Both instances exchange what they took with the fleet, one after the other. */
    const syncBoth = async (...buckets: Bucket[]) => {
      for (const bucket of buckets) await bucket.fleet!.sync();
      for (const bucket of buckets) await bucket.fleet!.sync();
    };
    const made: Bucket[] = [];
    const bucketOf = (name: string, spec: BucketSpec, state: Fleet) => {
      const bucket = new Bucket(name, spec, state);
      made.push(bucket);
      return bucket;
    };
    afterEach(() => {
      for (const bucket of made.splice(0)) bucket.close();
    });

    it('answers synchronously, as in one process: no request waits on Redis', () => {
      const bucket = bucketOf(fresh(), { ratePerSecond: 1, burst: 1 }, fleet);
      const order: string[] = [];
      const answered = bucket.consume('10.0.0.1', 1, (consumed) => {
        order.push(`then ${consumed.ok}`);
        return 'answered';
      });
      order.push('returned');
      expect(answered).to.equal('answered');
      expect(order).to.deep.equal(['then true', 'returned']);
    });

    // One algorithm: the burst at once, the first refusal, the wait for one token, as in one process.
    for (const spec of [
      { ratePerSecond: 1, burst: 1 },
      { ratePerSecond: 5, burst: 5 },
      { ratePerSecond: 2, burst: 4 },
    ] satisfies BucketSpec[]) {
      it(`agrees with the memory bucket on ${spec.burst} at once, the next refused, and its wait (${spec.ratePerSecond}/s)`, () => {
        const take = (bucket: Bucket) => Array.from({ length: spec.burst + 1 }, () => takeNow(bucket, '10.0.0.1', 1));
        const inFleet = take(bucketOf(fresh(), spec, fleet));
        const inMemory = take(new Bucket('reads:source', spec, memory()));
        expect(oks(inFleet)).to.deep.equal(oks(inMemory));
        expect(oks(inFleet)).to.deep.equal([...Array.from({ length: spec.burst }, () => true), false]);
        expect(waitOf(inFleet.at(-1))).to.be.within(1, 1_000 / spec.ratePerSecond + 1);
        expect(Math.abs(waitOf(inFleet.at(-1)) - waitOf(inMemory.at(-1)))).to.be.at.most(2);
      });
    }

    it('shares one bucket per name and key among the instances, once they have synced', async () => {
      const name = fresh();
      // Slow: the counters' window (burst / rate) is 40 s, and the test never straddles two.
      const spec = { ratePerSecond: 0.05, burst: 2 };
      const here = bucketOf(name, spec, fleet);
      const there = bucketOf(name, spec, other);
      expect(takeNow(here, '10.0.0.1', 1).ok).to.equal(true);
      expect(takeNow(there, '10.0.0.1', 1).ok).to.equal(true);
      await syncBoth(here, there);
      // Each took one of the two: the fleet's bucket is empty, at both.
      expect(takeNow(here, '10.0.0.1', 1).ok).to.equal(false);
      expect(takeNow(there, '10.0.0.1', 1).ok).to.equal(false);
      // Another key, or another kind of bucket, is another bucket.
      expect(takeNow(there, '10.0.0.2', 1).ok).to.equal(true);
      expect(takeNow(bucketOf(fresh(), spec, other), '10.0.0.1', 1).ok).to.equal(true);
      expect(fleet.fallbacks + other.fallbacks).to.equal(0);
    });

    it('charges work done at one instance to the source at every instance: the others refuse it until it is earned back', async () => {
      const name = fresh();
      const spec = { ratePerSecond: 0.1, burst: 3 };
      const here = bucketOf(name, spec, fleet);
      const there = bucketOf(name, spec, other);
      takeNow(there, '10.0.0.1', 1);
      await syncBoth(here, there);
      await here.charge('10.0.0.1', 5);
      await syncBoth(here, there);
      // 3 - 1 - 5: three tokens of debt, a token each 10 s: 40 s to the next.
      expect(waitOf(takeNow(there, '10.0.0.1', 1))).to.be.within(39_000, 40_001);
    });

    it('keeps what it took and saw across a reload: nothing is charged twice', async () => {
      const name = fresh();
      const spec = { ratePerSecond: 0.05, burst: 10 };
      const local = new MemoryBuckets(spec);
      const kept = new SyncState();
      const before = new Bucket(name, spec, fleet, local, kept);
      made.push(before);
      for (let i = 0; i < 6; i++) takeNow(before, '10.0.0.1', 1);
      await before.fleet!.sync();
      // The reload's chain: the same buckets and syncing state, a new Bucket; the old one still syncing till it is retired.
      const after = new Bucket(name, spec, fleet, local, kept);
      made.push(after);
      takeNow(after, '10.0.0.1', 1);
      await after.fleet!.sync();
      await before.fleet!.sync();
      // 10 - 6 - 1: the six taken before the reload are this instance's own, not the others'.
      expect(Math.floor(local.peek('10.0.0.1'))).to.equal(3);
    });

    it('holds a source hammering two instances to the fleet-wide rate, within 10%, with one Redis call per sync', async () => {
      const name = fresh();
      // Three seconds: what passes in the last sync interval before the end, and the two full
      // buckets before the first, stay a few percent of it even on a loaded machine.
      const spec = { ratePerSecond: 200, burst: 10 };
      const instances = [bucketOf(name, spec, fleet), bucketOf(name, spec, other)];
      const before = await evalCalls();
      const started = Date.now();
      let passed = 0;
      let tried = 0;
      while (Date.now() - started < 3_000) {
        for (const bucket of instances) {
          tried++;
          if (takeNow(bucket, '10.0.0.9', 1).ok) passed++;
        }
        await sleep(1);
      }
      const limit = spec.burst + (spec.ratePerSecond * (Date.now() - started)) / 1_000;
      expect(tried, 'attempts, well over the limit').to.be.above(2 * limit);
      expect(passed / limit, `passed ${passed} of a fleet-wide limit of ${limit.toFixed(0)}`).to.be.within(0.9, 1.1);
      // Two instances, one call each per 50 ms sync: about 120 in 3 s, whatever the attempts.
      expect((await evalCalls()) - before).to.be.at.most(150);
    });

    it('goes on deciding alone while Redis is down, counting each failed sync, and sends what it took once Redis is back', async () => {
      const name = fresh();
      const spec = { ratePerSecond: 1, burst: 2 };
      const here = bucketOf(name, spec, fleet);
      const there = bucketOf(name, spec, other);
      const closed = next(fleet, 'close');
      await redis.stop();
      await within(5_000, 'the client seeing Redis gone', closed);
      const before = fleet.fallbacks;
      expect(oks([takeNow(here, '10.0.0.1', 1), takeNow(here, '10.0.0.1', 1), takeNow(here, '10.0.0.1', 1)])).to.deep.equal([
        true,
        true,
        false,
      ]);
      await here.fleet!.sync();
      // Each failed sync is counted (the timer's retries too, every 50 ms while it has takes to send).
      expect(fleet.fallbacks - before).to.be.at.least(1);

      const ready = Promise.all([next(fleet, 'ready'), next(other, 'ready')]);
      await redis.restart();
      await within(5_000, 'both clients back on Redis', ready);
      // What it took while Redis was down is sent with the next sync: the other hears of it.
      takeNow(there, '10.0.0.1', 1);
      await syncBoth(here, there);
      expect(takeNow(there, '10.0.0.1', 1).ok).to.equal(false);
      // Shared again: what one takes now, the other hears of.
      takeNow(there, '10.0.0.3', 2);
      takeNow(here, '10.0.0.3', 1);
      await syncBoth(here, there);
      expect(takeNow(here, '10.0.0.3', 1).ok).to.equal(false);
    });
  });

  describe('in the primary process (workers: N without Redis)', () => {
    it('is what the rate-limit plugin hosts in the primary', () => {
      expect(rateLimit.shared).to.deep.equal({ 'rate-limit': hostedBucket });
    });

    it('hostedBucket answers synchronously from a memory bucket of the spec it was built with, per key', () => {
      const hosted = hostedBucket({ name: 'reads:source', spec: { ratePerSecond: 2, burst: 2 } });
      expect([hosted.consume('10.0.0.1', 1), hosted.consume('10.0.0.1', 1)]).to.deep.equal([{ ok: true }, { ok: true }]);
      const refused = hosted.consume('10.0.0.1', 1);
      expect(waitOf(refused)).to.be.within(250, 501);
      expect(hosted.consume('10.0.0.2', 2)).to.deep.equal({ ok: true });
      // Another hosted object keeps its own buckets.
      expect(hostedBucket({ name: 'reads:source', spec: { ratePerSecond: 2, burst: 2 } }).consume('10.0.0.1', 2)).to.deep.equal({
        ok: true,
      });
    });

    /**
     * A worker's view of the shared state: calls go to objects built as the primary builds them
     * (one per key, from the first call's init), recorded; a failed call falls back to local.
     */
    function primaryHome() {
      const calls: Array<{ service: string; key: string; init: unknown; method: string; args: unknown[] }> = [];
      const objects = new Map<string, ReturnType<typeof hostedBucket>>();
      let down = false;
      const call: PrimaryCall = async (service, key, init, method, args) => {
        calls.push({ service, key, init, method, args });
        if (down) throw Object.assign(new Error('the primary did not answer'), { code: 'PRIMARY_TIMEOUT' });
        let target = objects.get(key);
        if (target === undefined) {
          target = rateLimit.shared!['rate-limit']!(init) as ReturnType<typeof hostedBucket>;
          objects.set(key, target);
        }
        return (target as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args);
      };
      const state: SharedState = {
        home: (homes) => homes.primary(call),
        either: async (_what, remote, local) => {
          try {
            return await remote();
          } catch {
            return local();
          }
        },
      };
      return {
        state,
        calls,
        setDown: (value: boolean) => {
          down = value;
        },
      };
    }

    it('asks the primary to consume key and cost, on an object keyed by name, built from name and spec', async () => {
      const home = primaryHome();
      const spec = { ratePerSecond: 3, burst: 2 };
      const bucket = new Bucket('submissions:source', spec, home.state);
      const pending = bucket.consume('10.0.0.1', 2, (c) => c);
      expect(pending).to.be.instanceOf(Promise);
      expect(await pending).to.deep.equal({ ok: true });
      expect(waitOf(await bucket.consume('10.0.0.1', 1, (c) => c))).to.be.within(150, 335);
      expect(home.calls).to.deep.equal([
        {
          service: 'rate-limit',
          key: 'submissions:source',
          init: { name: 'submissions:source', spec },
          method: 'consume',
          args: ['10.0.0.1', 2],
        },
        {
          service: 'rate-limit',
          key: 'submissions:source',
          init: { name: 'submissions:source', spec },
          method: 'consume',
          args: ['10.0.0.1', 1],
        },
      ]);
    });

    it("shares the hosted bucket among workers, and resizes it to a reload's numbers without refilling it", async () => {
      const home = primaryHome();
      const spec = { ratePerSecond: 1, burst: 1 };
      expect(await new Bucket('reads:source', spec, home.state).consume('10.0.0.1', 1, (c) => c.ok)).to.equal(true);
      expect(await new Bucket('reads:source', spec, home.state).consume('10.0.0.1', 1, (c) => c.ok)).to.equal(false);
      const reloaded = new Bucket('reads:source', { ratePerSecond: 1, burst: 2 }, home.state);
      reloaded.adopt({ ratePerSecond: 1, burst: 2 });
      // Drained before, drained still: a larger burst is room to refill into, not tokens.
      expect(await reloaded.consume('10.0.0.1', 1, (c) => c.ok)).to.equal(false);
      expect(await reloaded.consume('10.0.0.2', 2, (c) => c.ok)).to.equal(true);
      expect(home.calls.map((c) => `${c.key} ${c.method}`)).to.deep.equal([
        'reads:source consume',
        'reads:source consume',
        'reads:source resize',
        'reads:source consume',
        'reads:source consume',
      ]);
    });

    it('asks the primary to charge key and cost on the same hosted bucket', async () => {
      const home = primaryHome();
      const bucket = new Bucket('submissions:source', { ratePerSecond: 10, burst: 2 }, home.state);
      await bucket.charge('10.0.0.1', 4);
      expect(waitOf(await bucket.consume('10.0.0.1', 1, (c) => c))).to.be.within(250, 301);
      expect(home.calls.map((c) => [c.key, c.method, c.args])).to.deep.equal([
        ['submissions:source', 'charge', ['10.0.0.1', 4]],
        ['submissions:source', 'consume', ['10.0.0.1', 1]],
      ]);
    });

    it('answers from its local twin when the primary does not answer', async () => {
      const home = primaryHome();
      const bucket = new Bucket('reads:source', { ratePerSecond: 1, burst: 1 }, home.state);
      expect(await bucket.consume('10.0.0.1', 1, (c) => c.ok)).to.equal(true);
      home.setDown(true);
      // The primary's bucket is spent; the local twin's is not.
      expect(await bucket.consume('10.0.0.1', 1, (c) => c.ok)).to.equal(true);
      expect(await bucket.consume('10.0.0.1', 1, (c) => c.ok)).to.equal(false);
      home.setDown(false);
      expect(await bucket.consume('10.0.0.1', 1, (c) => c.ok)).to.equal(false);
      expect(home.calls).to.have.length(4);
    });
  });
});
