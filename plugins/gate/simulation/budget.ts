/**
 * The compute budget of one simulation (gate option `simulation_budget_ms`): wall time since it
 * started, less the time it waited for EL reads. Checked at every JUMP and JUMPI (every loop
 * runs through one) and every CALL*, EXTCODE* and precompile call, so that neither a
 * pure-compute loop nor a chain of expensive calls runs past it (validation-rules.ts); the
 * simulation is then aborted and refused (simulate.ts).
 *
 * While several simulations share a thread (piscina's concurrentTasksPerWorker), the time one
 * spends ready but behind another is counted too: with one task per thread it is exact.
 */
import { performance } from 'node:perf_hooks';

/**
 * `simulation_budget_ms` by default: about twice the dearest single operation a real account
 * does, one KZG point evaluation (40-90 ms on the loaded 2-core machine; BENCHMARKS.md).
 */
export const DEFAULT_SIMULATION_BUDGET_MS = 200;

/** Thrown past the budget: not an EVM error, so it unwinds every call frame to simulate.ts. */
export class OverBudget extends Error {
  override name = 'OverBudget';
}

export class ComputeBudget {
  private readonly started = performance.now();
  private waitedMs = 0;
  private readonly deadline: number;

  constructor(readonly budgetMs: number) {
    this.deadline = this.started + budgetMs;
  }

  /** Awaits an EL read (or a one-time load), not counted as compute. */
  async waiting<T>(read: Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await read;
    } finally {
      const waited = performance.now() - start;
      this.waitedMs += waited;
    }
  }

  /** Compute milliseconds so far. */
  computeMs(): number {
    return performance.now() - this.started - this.waitedMs;
  }

  /** Throws OverBudget once the compute time passes the budget. */
  check(): void {
    if (performance.now() - this.waitedMs > this.deadline) throw new OverBudget(`over the simulation budget of ${this.budgetMs} ms`);
  }
}
