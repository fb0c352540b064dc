/**
 * Token buckets in this process, one per key, from the `limiter` package: `burst` tokens when a
 * key is first seen, refilled continuously at `ratePerSecond`. Synchronous, unlike the Redis
 * store: every read passes here, and its promises cost ~5% of a proxied read's CPU.
 */
import { TokenBucket } from 'limiter';

export interface BucketSpec {
  readonly ratePerSecond: number;
  readonly burst: number;
}

export type Consumed = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

const OK: Consumed = { ok: true };
/** The deepest debt `charge` leaves: what the sustained rate earns back in this many seconds. */
export const DEBT_SECONDS_MAX = 60;

/**
 * The wait until `bucket` holds `cost`. The options refuse a cost above a bucket's size (it could
 * never pass) at load time. One millisecond more than the wait: timers may fire a millisecond
 * early, and a client that waits exactly what it was told must find its token there.
 */
const waitFor = (bucket: TokenBucket, cost: number): number => Math.ceil(bucket.getWaitTime(cost)) + 1;

export class MemoryBuckets {
  private readonly buckets = new Map<string, TokenBucket>();
  /** Where the sweep goes on from: it walks the map a few keys at a time, in insertion order. */
  private sweep: Iterator<[string, TokenBucket]> | undefined;

  constructor(private spec: BucketSpec) {}

  /**
   * Takes new numbers (a reload that changed them): every held bucket keeps its level, refilled
   * up to now at the old rate, then clamped to the new burst, and refills at the new rate from
   * here. A drained source stays drained; a bucket is never topped up by a reload.
   */
  resize(spec: BucketSpec): void {
    if (spec.burst === this.spec.burst && spec.ratePerSecond === this.spec.ratePerSecond) return;
    this.spec = spec;
    for (const bucket of this.buckets.values()) {
      bucket.drip();
      bucket.bucketSize = spec.burst;
      bucket.tokensPerInterval = spec.ratePerSecond;
      bucket.content = Math.min(bucket.content, spec.burst);
    }
  }

  take(key: string, cost: number): Consumed {
    const bucket = this.bucketOf(key);
    if (bucket.tryRemoveTokens(cost)) return OK;
    return { ok: false, retryAfterMs: waitFor(bucket, cost) };
  }

  /**
   * Takes `cost` from `key`, into at most a second's debt (what the rate earns back in a second),
   * and returns how long until it holds a whole token again: 0 while it still holds one.
   */
  chargeAndWait(key: string, cost: number): number {
    const bucket = this.bucketOf(key);
    this.debit(bucket, cost, 1 - this.spec.ratePerSecond);
    return bucket.content >= 1 ? 0 : waitFor(bucket, 1);
  }

  /**
   * Takes `cost` tokens from `key` for work already done, whatever it holds: the bucket may go
   * into debt, down to what the rate earns back in `DEBT_SECONDS_MAX`, and `take` refuses until
   * the debt is earned back. Never refuses.
   */
  charge(key: string, cost: number): void {
    this.debit(this.bucketOf(key), cost);
  }

  /** Takes `cost` from `bucket`, leaving it at `floor` at least. */
  private debit(bucket: TokenBucket, cost: number, floor = -this.spec.ratePerSecond * DEBT_SECONDS_MAX): void {
    bucket.drip();
    bucket.content = Math.max(bucket.content - cost, floor);
  }

  /** Tokens `key` holds now, without taking any (a key not seen yet: the whole burst). */
  peek(key: string): number {
    const bucket = this.buckets.get(key);
    if (bucket === undefined) return this.spec.burst;
    bucket.drip();
    return bucket.content;
  }

  /** The keys held now (for tests). */
  get size(): number {
    return this.buckets.size;
  }

  private bucketOf(key: string): TokenBucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      this.forgetRefilled();
      bucket = new TokenBucket({ bucketSize: this.spec.burst, tokensPerInterval: this.spec.ratePerSecond, interval: 'second' });
      // The library starts a bucket empty; a source not seen before may send its burst.
      bucket.content = this.spec.burst;
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /**
   * Looks at the next two held keys and forgets those whose bucket has refilled (a full bucket
   * is the same as a new one). Called for each new key, so the map stays within about twice the
   * keys still refilling, at a constant cost per new key: no timer, no pause to scan them all.
   */
  private forgetRefilled(): void {
    for (let i = 0; i < 2; i++) {
      this.sweep ??= this.buckets.entries();
      const next = this.sweep.next();
      // A finished iterator stays finished, even for keys added later: start again next time.
      if (next.done === true) {
        this.sweep = undefined;
        return;
      }
      const [key, bucket] = next.value;
      bucket.drip();
      if (bucket.content >= bucket.bucketSize) this.buckets.delete(key);
    }
  }
}
