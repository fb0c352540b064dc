/**
 * One kind of bucket (e.g. "submissions per source"): a token-bucket-style limiter from
 * rate-limiter-flexible, `rate_per_second` sustained plus a `burst` allowance, keyed by source.
 * In fleet mode the buckets live in Redis, shared by every instance; with `workers: N` and no
 * Redis, in the primary process, shared by every worker. If that store fails, the local
 * in-memory twin answers (counted by the fleet) until it is back.
 */
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { callPrimary } from '../../src/cluster/calls.js';
import type { Fleet } from '../../src/fleet.js';

export interface BucketSpec {
  readonly ratePerSecond: number;
  readonly burst: number;
}

export type Consumed = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

const OK: Consumed = { ok: true };
const asIs = (consumed: Consumed): Consumed => consumed;

type Limiter = Pick<BurstyRateLimiter, 'consume'>;
type LimiterOptions = { points: number; duration: number; keyPrefix: string };

export class Bucket {
  private readonly local: Limiter;
  private readonly shared: ((key: string, cost: number) => Promise<Consumed>) | undefined;

  constructor(
    private readonly name: string,
    spec: BucketSpec,
    private readonly fleet: Fleet,
  ) {
    this.local = limiter(name, spec, (options) => new RateLimiterMemory(options));
    const storeClient = fleet.redis;
    if (storeClient !== undefined) {
      const shared = limiter(name, spec, (options) => new RateLimiterRedis({ ...options, storeClient }));
      this.shared = (key, cost) => take(shared, key, cost, asIs);
    } else if (fleet.viaPrimary) {
      // The spec is part of the key: after a reload with other numbers, a fresh bucket.
      const hosted = `${name}:${spec.ratePerSecond}:${spec.burst}`;
      this.shared = (key, cost) => callPrimary('rate-limit', hosted, { name, spec }, 'consume', [key, cost]) as Promise<Consumed>;
    }
  }

  /**
   * Takes `cost` tokens from `key`'s bucket and hands the outcome to `then`. The continuation is
   * a parameter because every read passes here: mapped in the same step as the library's answer,
   * one promise fewer per call than chaining on a returned `Consumed`.
   */
  consume<T>(key: string, cost: number, then: (consumed: Consumed) => T | Promise<T>): Promise<T> {
    const shared = this.shared;
    // Without a shared store, no fallback wrapper either.
    if (shared === undefined) return take(this.local, key, cost, then);
    return this.fleet
      .either(
        `rate limit ${this.name}`,
        () => shared(key, cost),
        () => take(this.local, key, cost, asIs),
      )
      .then(then);
  }
}

/** In the primary process: the memory bucket every worker consumes from. */
export function hostedBucket(init: unknown): { consume(key: string, cost: number): Promise<Consumed> } {
  const { name, spec } = init as { name: string; spec: BucketSpec };
  const shared = limiter(name, spec, (options) => new RateLimiterMemory(options));
  return { consume: (key, cost) => take(shared, key, cost, asIs) };
}

function limiter(name: string, spec: BucketSpec, make: (options: LimiterOptions) => Limiter): Limiter {
  // rate-limiter-flexible's token bucket: `ratePerSecond` tokens each second, and when those
  // are spent, an allowance of `burst - ratePerSecond` that refills over the time the
  // sustained rate takes to earn it. So a quiet source may send `burst` at once.
  const steady = { points: spec.ratePerSecond, duration: 1 };
  const extra = spec.burst - spec.ratePerSecond;
  const allowance = { points: extra, duration: Math.max(1, Math.ceil(extra / spec.ratePerSecond)) };
  const prefix = `svc-ingress:rl:${name}`;
  return extra === 0
    ? make({ ...steady, keyPrefix: prefix })
    : new BurstyRateLimiter(make({ ...steady, keyPrefix: prefix }) as never, make({ ...allowance, keyPrefix: `${prefix}:burst` }) as never);
}

/** A refusal is a RateLimiterRes; anything else thrown is a store failure and propagates. */
function take<T>(limiter: Limiter, key: string, cost: number, then: (consumed: Consumed) => T | Promise<T>): Promise<T> {
  // then() rather than async/await: every read passes here, and each await is another promise.
  return limiter.consume(key, cost).then(
    () => then(OK),
    (err: unknown) => then(refused(err)),
  );
}

function refused(err: unknown): Consumed {
  if (err instanceof RateLimiterRes) return { ok: false, retryAfterMs: Math.max(1, Math.ceil(err.msBeforeNext)) };
  throw err;
}
