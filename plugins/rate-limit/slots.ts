/**
 * Slots per source, counted in this process: what a source holds open (its requests in flight,
 * its gas-heavy reads in flight). A slot is taken at once, before any bucket answers, so that
 * concurrent requests see each other's. A source whose slots are all back keeps its entry, at
 * zero, until such entries are many (`IdleSweep`).
 */
import { IdleSweep } from '../../src/plugin.js';

export class Slots {
  private readonly sweep = new IdleSweep();

  /** `held`: the counts to count in, by source (a reload hands the running chain's over). */
  constructor(
    private readonly maxPerSource: number,
    private readonly held = new Map<string, number>(),
  ) {}

  /** Takes one of `source`'s slots and returns what gives it back (once; later calls do nothing), or undefined when it holds them all. */
  take(source: string): (() => void) | undefined {
    this.sweep.makeRoom(this.held, source, atZero);
    const held = this.held.get(source) ?? 0;
    if (held >= this.maxPerSource) return undefined;
    this.held.set(source, held + 1);
    let holding = true;
    return () => {
      if (!holding) return;
      holding = false;
      this.held.set(source, this.held.get(source)! - 1);
    };
  }
}

/** A source holding no slot now. */
const atZero = (held: number) => held === 0;
