/**
 * One kind of bucket (e.g. "submissions per source"), keyed by source: `burst` at once for a
 * quiet source, `rate_per_second` sustained. In one process, or in the primary process that
 * every worker of `workers: N` consumes from, the buckets are MemoryBuckets (synchronous token
 * buckets). In fleet mode they live in Redis, shared by every instance, as rate-limiter-flexible's
 * limiter; if Redis or the primary fails, the local in-memory twin answers (counted by the fleet)
 * until it is back.
 */
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { MemoryBuckets, type BucketSpec, type Consumed, type SharedState } from '../../src/plugin.js';

export type { BucketSpec, Consumed };

type Limiter = Pick<RateLimiterRedis, 'consume' | 'penalty'>;

interface SharedBucket {
  consume(key: string, cost: number): Promise<Consumed>;
  charge(key: string, cost: number): Promise<void>;
}
const OK: Consumed = { ok: true };

export class Bucket {
  private readonly local: MemoryBuckets;
  private readonly shared: SharedBucket | undefined;
  /** Sends new numbers to the primary's bucket (workers: N), when that is the shared home. */
  private resizeHosted: ((spec: BucketSpec) => void) | undefined;

  constructor(
    private readonly name: string,
    spec: BucketSpec,
    private readonly state: SharedState,
    /** This process's buckets, when carried over from before a reload. */
    local = new MemoryBuckets(spec),
  ) {
    this.local = local;
    this.shared = state.home({
      redis: (client) => {
        const limiter = redisLimiter(name, spec, client);
        return {
          consume: (key, cost) => take(limiter, key, cost),
          // Within the fixed window's rest only: the window forgets the debt when it ends.
          charge: async (key, cost) => void (await limiter.penalty(key, cost)),
        };
      },
      primary: (call) => {
        // Keyed by name: a reload with other numbers resizes the primary's bucket (see adopt).
        this.resizeHosted = (next) => void call('rate-limit', name, { name, spec }, 'resize', [next]).catch(() => {});
        return {
          consume: (key, cost) => call('rate-limit', name, { name, spec }, 'consume', [key, cost]) as Promise<Consumed>,
          charge: async (key, cost) => void (await call('rate-limit', name, { name, spec }, 'charge', [key, cost])),
        };
      },
    });
  }

  /**
   * A reload's numbers, once its chain is in place: this process's buckets and the primary's keep
   * their levels, clamped to the new burst (MemoryBuckets.resize). Redis keeps its own windows.
   */
  adopt(spec: BucketSpec): void {
    this.local.resize(spec);
    this.resizeHosted?.(spec);
  }

  /**
   * Takes `cost` tokens from `key`'s bucket and hands the outcome to `then`: synchronously when
   * the buckets are in this process (every read passes here), after the store's answer otherwise.
   */
  consume<T>(key: string, cost: number, then: (consumed: Consumed) => T | Promise<T>): T | Promise<T> {
    const shared = this.shared;
    if (shared === undefined) return then(this.local.take(key, cost));
    return this.state
      .either(
        `rate limit ${this.name}`,
        () => shared.consume(key, cost),
        () => this.local.take(key, cost),
      )
      .then(then);
  }

  /** Takes `cost` tokens for work already done, into debt if need be (MemoryBuckets.charge). */
  charge(key: string, cost: number): void | Promise<void> {
    const shared = this.shared;
    if (shared === undefined) return this.local.charge(key, cost);
    return this.state.either(
      `rate limit ${this.name}`,
      () => shared.charge(key, cost),
      () => this.local.charge(key, cost),
    );
  }
}

/** In the primary process: the memory bucket every worker consumes from. */
export function hostedBucket(init: unknown): {
  consume(key: string, cost: number): Consumed;
  charge(key: string, cost: number): void;
  resize(spec: BucketSpec): void;
} {
  const buckets = new MemoryBuckets((init as { spec: BucketSpec }).spec);
  return {
    consume: (key, cost) => buckets.take(key, cost),
    charge: (key, cost) => buckets.charge(key, cost),
    resize: (spec) => buckets.resize(spec),
  };
}

function redisLimiter(name: string, spec: BucketSpec, storeClient: Redis): Limiter {
  // One window of `burst` points lasting the time the sustained rate takes to earn them: a
  // quiet source may send `burst` at once, and no source more than `ratePerSecond` sustained.
  const duration = Math.ceil(spec.burst / spec.ratePerSecond);
  return new RateLimiterRedis({ points: spec.burst, duration, keyPrefix: `svc-ingress:rl:${name}`, storeClient });
}

/** A refusal is a RateLimiterRes; anything else thrown is a store failure and propagates. */
function take(limiter: Limiter, key: string, cost: number): Promise<Consumed> {
  return limiter.consume(key, cost).then(() => OK, refused);
}

function refused(err: unknown): Consumed {
  // Two milliseconds more than the window's rest: Redis reports it floored to the millisecond and a
  // timer may fire up to a millisecond early, yet a client that waits exactly what it was told
  // must find the window gone (with one, it did not, about once in a few hundred runs).
  if (err instanceof RateLimiterRes) return { ok: false, retryAfterMs: Math.max(0, Math.ceil(err.msBeforeNext)) + 2 };
  throw err;
}
