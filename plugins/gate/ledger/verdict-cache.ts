/**
 * Remembers, per transaction hash, what the gate answered recently:
 * - admitted hashes form the duplicate window (spec 7 "already known");
 * - refusals are replayed marked as cached. A refusal that depends only on the bytes (decoding,
 *   signatures) holds for the whole TTL; one that depends on state (nonce, balance, the EL's
 *   verdict) holds only while the head it was judged at is still the head, or, for a
 *   validation-prefix refusal, while the state it read is unchanged (dependencies.ts).
 *
 * Entries expire in insertion order (one TTL per map), so expiry is a sweep from the front.
 */
import { compactDependencies, type CachedDependencies } from '../head/dependencies.js';

export interface CachedRefusal {
  readonly reason: string;
  readonly detail: string;
  /** Further `data` members of the wire error (a VERIFY refusal's frame and cause). */
  readonly extra?: Readonly<Record<string, string | number>>;
  /** The EL's own words, for an EL refusal. */
  readonly byExecutionLayer: boolean;
  /** Head number it was judged at; undefined when the verdict does not depend on state. */
  readonly head: bigint | undefined;
  /**
   * What a validation-prefix refusal read: it holds at a later head while all of it reads the
   * same. Stored as a digest (dependencies.ts), or not at all when too many keys were read.
   */
  readonly dependencies?: CachedDependencies;
}

/**
 * The refusal as a cache keeps it (every ledger: memory, the primary process, Redis): its
 * dependencies as a digest, bounded; without them when their keys alone pass the bound, so that
 * it then holds only at its head.
 */
export function storedRefusal(refusal: CachedRefusal): CachedRefusal {
  if (refusal.dependencies === undefined) return refusal;
  const { dependencies, ...rest } = refusal;
  const digest = compactDependencies(dependencies);
  return digest === undefined ? rest : { ...rest, dependencies: digest };
}

class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private ttlMs: number,
    private maxEntries: number,
  ) {}

  /**
   * New numbers (a reload), entries kept: a shorter TTL brings every later expiry forward to it
   * (the order of expiries, which the sweep relies on, stays that of insertion); fewer entries
   * drop the oldest.
   */
  retune(ttlMs: number, maxEntries: number, now = Date.now()): void {
    if (ttlMs < this.ttlMs) {
      for (const entry of this.entries.values()) entry.expires = Math.min(entry.expires, now + ttlMs);
    }
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
    for (const key of this.entries.keys()) {
      if (this.entries.size <= maxEntries) break;
      this.entries.delete(key);
    }
  }

  get(key: string, now = Date.now()): V | undefined {
    this.sweep(now);
    return this.entries.get(key)?.value;
  }

  set(key: string, value: V, now = Date.now()): void {
    this.sweep(now);
    this.entries.delete(key);
    // Bounded memory under a flood of distinct hashes: the oldest entry makes room.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: now + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.expires > now) return;
      this.entries.delete(key);
    }
  }
}

export class VerdictCache {
  private readonly admitted: ExpiringMap<true>;
  private readonly refused: ExpiringMap<CachedRefusal>;

  constructor(options: { duplicateWindowMs: number; verdictTtlMs: number; maxEntries: number }) {
    this.admitted = new ExpiringMap(options.duplicateWindowMs, options.maxEntries);
    this.refused = new ExpiringMap(options.verdictTtlMs, options.maxEntries);
  }

  /** A reload's new numbers, what is remembered kept (ExpiringMap.retune). */
  retune(options: { duplicateWindowMs: number; verdictTtlMs: number; maxEntries: number }): void {
    this.admitted.retune(options.duplicateWindowMs, options.maxEntries);
    this.refused.retune(options.verdictTtlMs, options.maxEntries);
  }

  isAdmitted(hash: string): boolean {
    return this.admitted.get(hash) !== undefined;
  }

  admit(hash: string): void {
    this.admitted.set(hash, true);
  }

  forget(hash: string): void {
    this.admitted.delete(hash);
  }

  /** A recent refusal; the caller checks that a state-bound one was judged at the current head. */
  refusal(hash: string): CachedRefusal | undefined {
    return this.refused.get(hash);
  }

  refuse(hash: string, refusal: CachedRefusal): void {
    this.refused.set(hash, storedRefusal(refusal));
  }
}
