/**
 * The dearest EL times measured lately, per key (a source, a call target): the two highest
 * measurements, each halving every `halfLifeMs` after it was made, and the least ever measured.
 * `lately` is the second highest: one measurement far above the rest (a call that waited on a
 * busy EL) is forgiven, two are not. Bounded in keys: past `maxKeys`, the key measured longest
 * ago is forgotten first.
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
}

export class PeakHistory {
  /** In order of the last measurement (oldest first). */
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly halfLifeMs: number,
    private readonly maxKeys: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.kept.size;
  }

  /** Undefined for a key never measured (or forgotten). */
  peaks(key: string): Peaks | undefined {
    const kept = this.kept.get(key);
    if (kept === undefined) return undefined;
    const decay = this.decay(kept.at);
    return { highest: kept.highest * decay, lately: kept.second * decay, least: kept.least };
  }

  record(key: string, ms: number): void {
    const at = this.now();
    const kept = this.kept.get(key);
    if (kept === undefined) {
      if (this.kept.size >= this.maxKeys) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(key, { highest: ms, second: 0, at, least: ms });
      return;
    }
    // Every gas-heavy read records here: the two highest kept without an array to sort.
    const decay = this.decay(kept.at);
    const highest = kept.highest * decay;
    const second = kept.second * decay;
    kept.highest = Math.max(ms, highest);
    kept.second = ms >= highest ? highest : Math.max(ms, second);
    kept.at = at;
    kept.least = Math.min(ms, kept.least);
    // Last in the map's order: the key measured longest ago stays first, to go first.
    this.kept.delete(key);
    this.kept.set(key, kept);
  }

  private decay(at: number): number {
    return 2 ** (-(this.now() - at) / this.halfLifeMs);
  }
}
