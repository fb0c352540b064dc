/**
 * A kind of bucket shared by a fleet without a Redis round trip per request. Every instance
 * decides from its own token buckets (MemoryBuckets: the algorithm of one process, with its
 * Retry-After) and, every `SYNC_MS`, adds what it took per key to a counter per key in Redis,
 * in one script call per `KEYS_PER_CALL` keys it served. A counter's new total tells it what the
 * other instances took since it last looked, which it takes from its own bucket for that key, as
 * debt if need be (MemoryBuckets.charge). So every instance's bucket for a source holds what the
 * fleet left of it, and the fleet-wide rate is the configured one over time.
 *
 * Counters are per window of the time the bucket takes to refill (`burst / rate`, at least a
 * second), named with that length, so that what an instance learns at its first look at a
 * source is recent: the others' takes within the current window. Windows come from each host's
 * clock: the fleet's clocks must agree to well within a window (NTP does).
 *
 * What is approximate, and by how much (docs/fleet.md): between two syncs an instance
 * does not see what the others take, so within one interval a source may pass at each instance
 * what that instance's bucket holds; the debt is then charged everywhere and the overshoot
 * earned back. An instance serving a source for the first time (or again after more than a
 * window) counts the current window's takes, and the window before's as far as it lies within
 * the last window's length (its total times the share of it not yet a window ago: a sliding
 * window's estimate), so that a source visiting the instances one window each is charged what it
 * took. A source over the fleet-wide limit is refused by every instance serving it
 * within one sync. A sync that fails is sent again with the next one; one that timed out may
 * have been applied, so what it carried is not counted twice as the others' (and is lost to
 * the others if it was not). A reload keeps what was taken and seen (`SyncState`, carried).
 */
import type { Redis } from 'ioredis';
import type { BucketSpec, MemoryBuckets, SharedState } from '../../src/plugin.js';

const SYNC_MS = 50;
/** Keys in one script call: a fleet of many sources sends several calls per sync, none huge. */
const KEYS_PER_CALL = 500;
/** Keys whose last look is remembered; past it the oldest are forgotten (they start again from a first look). */
const REMEMBERED_MAX = 100_000;
/**
 * A key this instance took from within this long, and whose bucket here is not full, is synced
 * even when it took nothing since: it hears what the others take. A full bucket has nothing to learn.
 */
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

/** What this instance last saw of a key: the window and its counter's total then. */
interface Seen {
  readonly window: number;
  readonly total: number;
}

/** A bucket's syncing, kept across a reload with its MemoryBuckets: one sync at a time, whichever runtime asks. */
export class SyncState {
  /** Tokens taken here per key since the last sync. */
  taken = new Map<string, number>();
  /** When this instance last took from each key (the keys it listens to). */
  readonly recent = new Map<string, number>();
  readonly seen = new Map<string, Seen>();
  /** What a timed-out sync carried per key: maybe in the counters already. */
  readonly uncertain = new Map<string, number>();
  syncing: Promise<void> = Promise.resolve();
}

export class FleetSync {
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly name: string,
    private readonly redis: Redis,
    private readonly local: MemoryBuckets,
    private readonly state: SharedState,
    private spec: BucketSpec,
    private readonly kept: SyncState = new SyncState(),
  ) {
    this.timer = setInterval(() => void this.sync(), SYNC_MS).unref();
  }

  /** `cost` tokens of `key` taken here (passed, or charged as debt). */
  took(key: string, cost: number): void {
    const { taken, recent } = this.kept;
    taken.set(key, (taken.get(key) ?? 0) + cost);
    recent.set(key, Date.now());
  }

  /** One sync now (after the one under way, whichever runtime started it): tests await it rather than a clock. */
  sync(): Promise<void> {
    this.kept.syncing = this.kept.syncing.then(() => this.exchange()).catch(() => undefined);
    return this.kept.syncing;
  }

  /** A reload's numbers: its windows are named with their length, so they are new counters. */
  resize(spec: BucketSpec): void {
    this.spec = spec;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async exchange(): Promise<void> {
    const now = Date.now();
    const { kept } = this;
    const taken = kept.taken;
    kept.taken = new Map();
    for (const [key, at] of kept.recent) {
      if (now - at > LISTEN_MS) kept.recent.delete(key);
      else if (!taken.has(key) && this.local.peek(key) < this.spec.burst) taken.set(key, 0);
    }
    const windowMs = Math.max(1_000, Math.ceil((this.spec.burst / this.spec.ratePerSecond) * 1_000));
    const window = Math.floor(now / windowMs);
    const keys = [...taken.keys()];
    for (let start = 0; start < keys.length; start += KEYS_PER_CALL) {
      await this.exchangeSome(keys.slice(start, start + KEYS_PER_CALL), taken, windowMs, window, now);
    }
    while (kept.seen.size > REMEMBERED_MAX) kept.seen.delete(kept.seen.keys().next().value!);
    for (const held of [kept.recent, kept.uncertain]) {
      while (held.size > REMEMBERED_MAX) held.delete(held.keys().next().value!);
    }
  }

  private async exchangeSome(keys: string[], taken: Map<string, number>, windowMs: number, window: number, now: number): Promise<void> {
    const { kept } = this;
    const counter = (key: string, at: number) => `svc-ingress:rl:${this.name}:${windowMs}:${at}:${key}`;
    let timedOut = false;
    const totals = await this.state.either(
      `rate limit ${this.name} sync`,
      async () => {
        try {
          return (await this.redis.eval(
            ADD_SCRIPT,
            keys.length * 2,
            ...keys.flatMap((key) => [counter(key, window), counter(key, window - 1)]),
            String(2 * windowMs),
            ...keys.map((key) => String(taken.get(key))),
          )) as number[];
        } catch (err) {
          timedOut = err instanceof Error && /timed out/i.test(err.message);
          throw err;
        }
      },
      () => undefined,
    );
    if (totals === undefined) {
      for (const key of keys) {
        const own = taken.get(key)!;
        if (own === 0) continue;
        // Sent and maybe applied: not counted again as the others'. Never sent: sent with the next.
        const into = timedOut ? kept.uncertain : kept.taken;
        into.set(key, (into.get(key) ?? 0) + own);
      }
      return;
    }
    keys.forEach((key, i) => {
      const own = taken.get(key)!;
      const [total, before] = [totals[2 * i]!, totals[2 * i + 1]!];
      const last = kept.seen.get(key);
      // What the others took since this instance last looked: in this window past what it saw
      // then (all of it at a first look), and the rest of the window before (at a first look,
      // the part of it within a window's length of now).
      let others = total - own;
      if (last?.window === window) others -= last.total;
      else if (last?.window === window - 1) others += before - last.total;
      // A clock stepped back: nothing is known of the others' takes in between.
      else if (last !== undefined && last.window > window) others = 0;
      else others += Math.round(before * (1 - (now - window * windowMs) / windowMs));
      others -= kept.uncertain.get(key) ?? 0;
      kept.uncertain.delete(key);
      if (others > 0) this.local.charge(key, others);
      kept.seen.delete(key);
      kept.seen.set(key, { window, total });
    });
  }
}
