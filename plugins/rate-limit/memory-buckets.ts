/**
 * Token buckets in this process, one per key, from the `limiter` package: `burst` tokens when a
 * key is first seen, refilled continuously at `ratePerSecond`. Synchronous, unlike the Redis
 * store: every read passes here, and a promise per call cost ~6% of a proxied read's CPU.
 */
import { TokenBucket } from 'limiter';
import type { BucketSpec, Consumed } from './bucket.js';

const OK: Consumed = { ok: true };

export class MemoryBuckets {
  private readonly buckets = new Map<string, TokenBucket>();
  private lastSweep = performance.now();

  /** `sweepEveryMs`: how often full buckets are forgotten (a refilled bucket equals a new one). */
  constructor(
    private readonly spec: BucketSpec,
    private readonly sweepEveryMs = 1_000,
  ) {}

  take(key: string, cost: number): Consumed {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      this.sweepSometimes();
      bucket = new TokenBucket({ bucketSize: this.spec.burst, tokensPerInterval: this.spec.ratePerSecond, interval: 'second' });
      // The library starts a bucket empty; a source not seen before may send its burst.
      bucket.content = this.spec.burst;
      this.buckets.set(key, bucket);
    }
    if (bucket.tryRemoveTokens(cost)) return OK;
    // The options refuse a cost above a bucket's size (it could never pass) at load time.
    return { ok: false, retryAfterMs: Math.max(1, Math.ceil(bucket.getWaitTime(cost))) };
  }

  /** The keys held now (for tests). */
  get size(): number {
    return this.buckets.size;
  }

  /**
   * Forgets full buckets, at most once per `sweepEveryMs` and only when a new key arrives: the map
   * holds the keys active within their refill time plus one sweep, and no timer outlives a reload.
   */
  private sweepSometimes(): void {
    const now = performance.now();
    if (now - this.lastSweep < this.sweepEveryMs) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      bucket.drip();
      if (bucket.content >= bucket.bucketSize) this.buckets.delete(key);
    }
  }
}
