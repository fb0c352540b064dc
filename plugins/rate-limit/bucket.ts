/**
 * One kind of bucket (e.g. "submissions per source"): a token-bucket-style limiter from
 * rate-limiter-flexible, `rate_per_second` sustained plus a `burst` allowance, keyed by source.
 * In fleet mode the buckets live in Redis, shared by every instance; if Redis fails, the local
 * in-memory twin answers (counted by the fleet) until Redis is back.
 */
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Fleet } from '../../src/fleet.js';

export interface BucketSpec {
  readonly ratePerSecond: number;
  readonly burst: number;
}

export type Consumed = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

const OK: Consumed = { ok: true };

export class Bucket {
  private readonly local: BurstyRateLimiter;
  private readonly shared: BurstyRateLimiter | undefined;

  constructor(
    private readonly name: string,
    spec: BucketSpec,
    private readonly fleet: Fleet,
  ) {
    // rate-limiter-flexible's token bucket: a per-second limiter, and when it is empty, a burst
    // allowance that refills over the time the sustained rate takes to earn it.
    const steady = { points: spec.ratePerSecond, duration: 1 };
    const burst = { points: spec.burst, duration: Math.max(1, Math.ceil(spec.burst / spec.ratePerSecond)) };
    const prefix = `svc-ingress:rl:${name}`;
    this.local = new BurstyRateLimiter(
      new RateLimiterMemory({ ...steady, keyPrefix: prefix }),
      new RateLimiterMemory({ ...burst, keyPrefix: `${prefix}:burst` }),
    );
    if (fleet.redis !== undefined) {
      const storeClient = fleet.redis;
      this.shared = new BurstyRateLimiter(
        new RateLimiterRedis({ ...steady, keyPrefix: prefix, storeClient }),
        new RateLimiterRedis({ ...burst, keyPrefix: `${prefix}:burst`, storeClient }),
      );
    }
  }

  consume(key: string, cost: number): Promise<Consumed> {
    const shared = this.shared;
    return this.fleet.either(
      `rate limit ${this.name}`,
      () => take(shared!, key, cost),
      () => take(this.local, key, cost),
    );
  }
}

/** A refusal is a RateLimiterRes; anything else thrown is a store failure and propagates. */
async function take(limiter: BurstyRateLimiter, key: string, cost: number): Promise<Consumed> {
  try {
    await limiter.consume(key, cost);
    return OK;
  } catch (err) {
    if (err instanceof RateLimiterRes) return { ok: false, retryAfterMs: Math.max(1, Math.ceil(err.msBeforeNext)) };
    throw err;
  }
}
