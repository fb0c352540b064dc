/**
 * Slots per source, counted in this process: what a source holds open (its requests in flight,
 * its gas-heavy reads in flight). A slot is taken at once, before any bucket answers, so that
 * concurrent requests see each other's. A source whose slots are all back keeps its entry, at
 * zero, until such entries are many: a Map that gains and loses an entry at each request costs V8
 * a new table every few requests once the Map is old (~0.7 µs a request).
 */
export class Slots {
  /** Entries past which those at zero are swept, taking a new source: twice what the last sweep left. */
  private sweepAt = SWEEP_AT_LEAST;

  /** `held`: the counts to count in, by source (a reload hands the running chain's over). */
  constructor(
    private readonly maxPerSource: number,
    private readonly held = new Map<string, number>(),
  ) {}

  /** Takes one of `source`'s slots and returns what gives it back (once; later calls do nothing), or undefined when it holds them all. */
  take(source: string): (() => void) | undefined {
    const held = this.held.get(source);
    if (held === undefined && this.held.size >= this.sweepAt) this.sweep();
    if ((held ?? 0) >= this.maxPerSource) return undefined;
    this.held.set(source, (held ?? 0) + 1);
    let holding = true;
    return () => {
      if (!holding) return;
      holding = false;
      this.held.set(source, this.held.get(source)! - 1);
    };
  }

  private sweep(): void {
    for (const [source, held] of this.held) if (held === 0) this.held.delete(source);
    this.sweepAt = Math.max(SWEEP_AT_LEAST, 2 * this.held.size);
  }
}

const SWEEP_AT_LEAST = 1_024;
