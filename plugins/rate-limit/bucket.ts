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

type Limiter = Pick<BurstyRateLimiter, 'consume'>;

export class Bucket {
  private readonly local: Limiter;
  private readonly shared: Limiter | undefined;

  constructor(
    private readonly name: string,
    spec: BucketSpec,
    private readonly fleet: Fleet,
  ) {
    // rate-limiter-flexible's token bucket: `ratePerSecond` tokens each second, and when those
    // are spent, an allowance of `burst - ratePerSecond` that refills over the time the
    // sustained rate takes to earn it. So a quiet source may send `burst` at once.
    const steady = { points: spec.ratePerSecond, duration: 1 };
    const extra = spec.burst - spec.ratePerSecond;
    const allowance = { points: extra, duration: Math.max(1, Math.ceil(extra / spec.ratePerSecond)) };
    const prefix = `svc-ingress:rl:${name}`;
    const build = (make: (options: { points: number; duration: number; keyPrefix: string }) => Limiter): Limiter =>
      extra === 0
        ? make({ ...steady, keyPrefix: prefix })
        : new BurstyRateLimiter(make({ ...steady, keyPrefix: prefix }) as never, make({ ...allowance, keyPrefix: `${prefix}:burst` }) as never);
    this.local = build((options) => new RateLimiterMemory(options));
    const storeClient = fleet.redis;
    if (storeClient !== undefined) this.shared = build((options) => new RateLimiterRedis({ ...options, storeClient }));
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
async function take(limiter: Limiter, key: string, cost: number): Promise<Consumed> {
  try {
    await limiter.consume(key, cost);
    return OK;
  } catch (err) {
    if (err instanceof RateLimiterRes) return { ok: false, retryAfterMs: Math.max(1, Math.ceil(err.msBeforeNext)) };
    throw err;
  }
}
