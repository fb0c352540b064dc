/**
 * A kind of bucket shared by a fleet without a Redis round trip per request. Every instance
 * decides from its own token buckets (MemoryBuckets: the algorithm of one process, with its
 * Retry-After) and, every `SYNC_MS`, adds what it took per key to a counter per key in Redis,
 * in one script call for every key it served. A counter's new total tells it what the other
 * instances took since it last looked, which it takes from its own bucket for that key, as debt
 * if need be (MemoryBuckets.charge). So every instance's bucket for a source holds what the
 * fleet left of it, and the fleet-wide rate is the configured one over time.
 *
 * Counters are per window of the time the bucket takes to refill (`burst / rate`, at least a
 * second), so that what an instance learns at its first look at a source is recent: the
 * others' takes within the current window.
 *
 * What is approximate, and by how much (README "Fleet mode"): between two syncs an instance
 * does not see what the others take, so within one interval a source may pass at each instance
 * what that instance's bucket holds; the debt is then charged everywhere and the overshoot
 * earned back. An instance serving a source for the first time counts only the current
 * window's takes. A source over the fleet-wide limit is refused by every instance serving it
 * within one sync. A Redis that fails or restarts costs the syncs it misses (the buckets go on
 * deciding alone, each failure counted as a fallback).
 */
import type { Redis } from 'ioredis';
import type { BucketSpec, MemoryBuckets, SharedState } from '../../src/plugin.js';

export const SYNC_MS = 50;
/** Keys whose last total is remembered; past it the oldest are forgotten (they start again from their first sync). */
const REMEMBERED_MAX = 100_000;
/** A key this instance took from within this long is synced even when it took nothing since: it hears the others. */
const LISTEN_MS = 1_000;

/**
 * KEYS in pairs, a key's counter in this window and in the one before: adds ARGV[i + 1] to the
 * first (expiring ARGV[1] ms on), answers its new total and the other's (0 if none).
 */
const ADD_SCRIPT = `
local totals = {}
for i = 1, #KEYS, 2 do
  local n = (i + 1) / 2
  totals[i] = redis.call('INCRBY', KEYS[i], ARGV[n + 1])
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
  totals[i + 1] = tonumber(redis.call('GET', KEYS[i + 1]) or '0')
end
return totals
`;

/** What this instance last saw of a key: the window, its counter's total then, and when it last took from it. */
interface Seen {
  readonly window: number;
  readonly total: number;
  readonly at: number;
}

export class FleetSync {
  /** Tokens this instance took per key since the last sync. */
  private taken = new Map<string, number>();
  /** Per key: the counter's total when this instance last saw it, and when it last took from the key. */
  private readonly seen = new Map<string, Seen>();
  private readonly timer: NodeJS.Timeout;
  private syncing: Promise<void> = Promise.resolve();

  constructor(
    private readonly name: string,
    private readonly redis: Redis,
    private readonly local: MemoryBuckets,
    private readonly state: SharedState,
    private spec: BucketSpec,
  ) {
    this.timer = setInterval(() => void this.sync(), SYNC_MS).unref();
  }

  /** `cost` tokens of `key` taken here (passed, or charged as debt). */
  took(key: string, cost: number): void {
    this.taken.set(key, (this.taken.get(key) ?? 0) + cost);
  }

  /** One sync now (after the one under way): tests await it rather than a clock. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.exchange()).catch(() => undefined);
    return this.syncing;
  }

  /** A reload's numbers: the window follows them (counters of the old window still count as the one before). */
  resize(spec: BucketSpec): void {
    this.spec = spec;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async exchange(): Promise<void> {
    const now = Date.now();
    const taken = this.taken;
    this.taken = new Map();
    for (const [key, { at }] of this.seen) {
      if (now - at <= LISTEN_MS && !taken.has(key)) taken.set(key, 0);
    }
    if (taken.size === 0) return;
    const windowMs = Math.max(1_000, Math.ceil((this.spec.burst / this.spec.ratePerSecond) * 1_000));
    const window = Math.floor(now / windowMs);
    const keys = [...taken.keys()];
    const counter = (key: string, at: number) => `svc-ingress:rl:${this.name}:${at}:${key}`;
    const totals = await this.state.either(
      `rate limit ${this.name} sync`,
      async () =>
        (await this.redis.eval(
          ADD_SCRIPT,
          keys.length * 2,
          ...keys.flatMap((key) => [counter(key, window), counter(key, window - 1)]),
          String(2 * windowMs),
          ...keys.map((key) => String(taken.get(key))),
        )) as number[],
      () => undefined,
    );
    if (totals === undefined) return;
    keys.forEach((key, i) => {
      const own = taken.get(key)!;
      const [total, before] = [totals[2 * i]!, totals[2 * i + 1]!];
      const last = this.seen.get(key);
      // What the others took since this instance last looked: in this window past what it saw
      // then (all of it at a first look in the window), and the rest of the window before.
      let others = total - own - (last?.window === window ? last.total : 0);
      if (last?.window === window - 1) others += before - last.total;
      if (others > 0) this.local.charge(key, others);
      this.seen.delete(key);
      this.seen.set(key, { window, total, at: own > 0 ? now : (last?.at ?? now) });
    });
    while (this.seen.size > REMEMBERED_MAX) this.seen.delete(this.seen.keys().next().value!);
  }
}
