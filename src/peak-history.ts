/**
 * The dearest EL times measured lately, per key (a source, a call target): the two highest
 * measurements, each halving every `halfLifeMs` after it was made, and the least ever measured.
 * `lately` is the second highest: one measurement far above the rest (a call that waited on a
 * busy EL) is forgiven, two are not. Bounded in keys: past `maxKeys`, the key measured longest
 * ago (to within a sixteenth of a half-life) is forgotten first.
 */
export interface Peaks {
  /** The highest measurement, decayed. */
  readonly highest: number;
  /** The second highest measurement, decayed: 0 after one measurement. */
  readonly lately: number;
  /** The least measurement ever made. */
  readonly least: number;
}

interface Kept {
  highest: number;
  second: number;
  at: number;
  least: number;
  /** When it was last moved to the end of the eviction order. */
  moved: number;
}

/**
 * A key measured again is moved to the end of the eviction order only this share of a half-life
 * after its last move: a Map that loses and regains an entry at each call costs V8 a new table
 * every few calls once the Map is old (~0.7 µs a call, three per gas-heavy read).
 */
const MOVE_SHARE = 16;

export class PeakHistory {
  /** In order of the last move (oldest first). */
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly halfLifeMs: number,
    private readonly maxKeys: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.kept.size;
  }

  /**
   * Undefined for a key never measured (or forgotten). `at`: the time to decay to, when the caller
   * has read the clock already (a scheduler asks several keys about one call). The scheduler asks
   * through the three queries below, which answer what this says without building it.
   */
  peaks(key: string, at = this.now()): Peaks | undefined {
    const kept = this.kept.get(key);
    if (kept === undefined) return undefined;
    const decay = decayed(at - kept.at, this.halfLifeMs);
    return { highest: kept.highest * decay, lately: kept.second * decay, least: kept.least };
  }

  /**
   * What `peaks` says against `bound`, asked on every gas-heavy read without building its
   * answer: the least ever measured if it and `lately` are within `bound`, else undefined.
   */
  leastIfWithin(key: string, bound: number, at = this.now()): number | undefined {
    const kept = this.kept.get(key);
    if (kept === undefined || kept.least > bound || decayedAbove(kept.second, kept.at, at, bound, this.halfLifeMs)) return undefined;
    return kept.least;
  }

  /** Whether `peaks(key).lately` is above `bound` (false for a key never measured). */
  latelyAbove(key: string, bound: number, at = this.now()): boolean {
    const kept = this.kept.get(key);
    return kept !== undefined && decayedAbove(kept.second, kept.at, at, bound, this.halfLifeMs);
  }

  /** Whether `peaks(key).highest` is above `bound` (false for a key never measured). */
  highestAbove(key: string, bound: number, at = this.now()): boolean {
    const kept = this.kept.get(key);
    return kept !== undefined && decayedAbove(kept.highest, kept.at, at, bound, this.halfLifeMs);
  }

  record(key: string, ms: number, at = this.now()): void {
    const kept = this.kept.get(key);
    if (kept === undefined) {
      if (this.kept.size >= this.maxKeys) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(key, { highest: ms, second: 0, at, least: ms, moved: at });
      return;
    }
    // Every gas-heavy read records here: the two highest kept without an array to sort.
    const decay = decayed(at - kept.at, this.halfLifeMs);
    const highest = kept.highest * decay;
    const second = kept.second * decay;
    kept.highest = Math.max(ms, highest);
    kept.second = ms >= highest ? highest : Math.max(ms, second);
    kept.at = at;
    kept.least = Math.min(ms, kept.least);
    this.measured(key, kept, at);
  }

  /**
   * `record` where a question asked against `bound` could answer otherwise; else only moved in the
   * eviction order, as a record moves it. Nothing asked against the bound changes when `ms` is
   * within it and no less than the least, and both peaks were within it already: a key whose
   * measurements all stay within the bound (a cheap target, called thousands of times a second)
   * takes no power and no write.
   */
  recordAgainst(key: string, ms: number, bound: number, at = this.now()): void {
    const kept = this.kept.get(key);
    if (kept === undefined || ms > bound || ms < kept.least || kept.highest > bound) return this.record(key, ms, at);
    this.measured(key, kept, at);
  }

  /** Last in the map's order: the key measured longest ago stays first, to go first. */
  private measured(key: string, kept: Kept, at: number): void {
    if (at - kept.moved < this.halfLifeMs / MOVE_SHARE) return;
    kept.moved = at;
    this.kept.delete(key);
    this.kept.set(key, kept);
  }
}

/** What is left of a measurement `ms` milliseconds old. */
const decayed = (ms: number, halfLifeMs: number): number => 2 ** (-ms / halfLifeMs);

/**
 * Whether `value` measured at `since`, decayed to `at`, is above `bound`: once `at` is past
 * `since`, one within it before its decay is within it after, and needs no power.
 */
const decayedAbove = (value: number, since: number, at: number, bound: number, halfLifeMs: number): boolean =>
  (value > bound || at < since) && value * decayed(at - since, halfLifeMs) > bound;
