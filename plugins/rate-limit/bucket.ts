/**
 * One kind of bucket (e.g. "submissions per source"), keyed by source: `burst` at once for a
 * quiet source, `rate_per_second` sustained. Everywhere the same token buckets (MemoryBuckets),
 * with the same Retry-After: in one process; in the primary process that every worker of
 * `workers: N` consumes from (if it fails, the local twin answers, counted by the fleet); and in
 * fleet mode in every instance, kept in step through Redis in the background (fleet-sync.ts), so
 * that no request waits on Redis.
 */
import { MemoryBuckets, type BucketSpec, type Consumed, type SharedState } from '../../src/plugin.js';
import { FleetSync, SyncState } from './fleet-sync.js';

export type { BucketSpec, Consumed };

interface SharedBucket {
  consume(key: string, cost: number): Promise<Consumed>;
  charge(key: string, cost: number): Promise<void>;
}

export class Bucket {
  private readonly local: MemoryBuckets;
  /** The primary's bucket (workers: N). */
  private readonly shared: SharedBucket | undefined;
  /** The fleet's, through Redis. */
  readonly fleet: FleetSync | undefined;
  /** Sends new numbers to the primary's bucket (workers: N), when that is the shared home. */
  private resizeHosted: ((spec: BucketSpec) => void) | undefined;

  constructor(
    private readonly name: string,
    spec: BucketSpec,
    private readonly state: SharedState,
    /** This process's buckets, when carried over from before a reload. */
    local = new MemoryBuckets(spec),
    /** What syncing with a fleet took and saw, carried over likewise. */
    kept = new SyncState(),
  ) {
    this.local = local;
    let fleet: FleetSync | undefined;
    this.shared = state.home<SharedBucket | undefined>({
      redis: (client) => {
        fleet = new FleetSync(name, client, local, state, spec, kept);
        return undefined;
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
    this.fleet = fleet;
  }

  /**
   * A reload's numbers, once its chain is in place: this process's buckets and the primary's keep
   * their levels, clamped to the new burst (MemoryBuckets.resize).
   */
  adopt(spec: BucketSpec): void {
    this.local.resize(spec);
    this.fleet?.resize(spec);
    this.resizeHosted?.(spec);
  }

  /**
   * Takes `cost` tokens from `key`'s bucket and hands the outcome to `then`: synchronously when
   * the buckets are in this process, alone or in a fleet (every read passes here), after the
   * primary's answer otherwise.
   */
  consume<T>(key: string, cost: number, then: (consumed: Consumed) => T | Promise<T>): T | Promise<T> {
    const shared = this.shared;
    if (shared === undefined) {
      const consumed = this.local.take(key, cost);
      if (consumed.ok) this.fleet?.took(key, cost);
      return then(consumed);
    }
    return this.state
      .either(
        `rate limit ${this.name}`,
        () => shared.consume(key, cost),
        () => this.local.take(key, cost),
      )
      .then(then);
  }

  /** Stops syncing with the fleet (the chain is replaced or closed). */
  close(): void {
    this.fleet?.close();
  }

  /** Takes `cost` tokens for work already done, into debt if need be (MemoryBuckets.charge). */
  charge(key: string, cost: number): void | Promise<void> {
    const shared = this.shared;
    if (shared === undefined) {
      this.fleet?.took(key, cost);
      return this.local.charge(key, cost);
    }
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
