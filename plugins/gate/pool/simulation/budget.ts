/**
 * The compute budget of one simulation (gate option `simulation_budget_ms`): the thread's time
 * it had, not counting the time it waited for EL reads. Checked at every JUMP and JUMPI (every
 * loop runs through one) and every CALL*, EXTCODE* and precompile call, so that neither a
 * pure-compute loop nor a chain of expensive calls runs past it (protocol/mempool/trace-rules.ts); the
 * simulation is then aborted and refused (simulate.ts).
 *
 * The gate's pool gives a thread one task at a time (work-pool.ts), so this is wall time less EL
 * waits. Should a thread run several (simulations interleave at every await), wall time would
 * charge each for the others' work: the thread's time is shared out like a processor-sharing
 * scheduler would, each of n runnable tasks charged 1/n of the time that passes (`ThreadShares`,
 * a virtual clock advanced at each change of n).
 */
import { performance } from 'node:perf_hooks';

/**
 * `simulation_budget_ms` by default: about twice the dearest single operation a real account
 * does, one KZG point evaluation (40-90 ms on the loaded 2-core machine; BENCHMARKS.md).
 */
export const DEFAULT_SIMULATION_BUDGET_MS = 200;
/**
 * A frame transaction's gas estimate, every run of it together: a transfer's takes a few
 * milliseconds, a search over a frame that runs millions of gas a few hundred. The lane is served
 * by turns, so another source's estimate may wait for one of these whole: measured with one
 * source flooding loops at its quotas, another's estimates p50 unchanged, p90 0.8 s at 2,000.
 */
export const DEFAULT_ESTIMATE_BUDGET_MS = 1_000;

/** Thrown past the budget: not an EVM error, so it unwinds every call frame to simulate.ts. */
export class OverBudget extends Error {
  override name = 'OverBudget';
}

/** The thread's time shared among the tasks that can run: each has had `virtual()` ms of it to itself. */
export class ThreadShares {
  private runnable = 0;
  private clock = 0;
  private last = performance.now();

  /** The virtual clock now: ms each runnable task has been charged since the thread started. */
  virtual(): number {
    const now = performance.now();
    if (this.runnable > 0) this.clock += (now - this.last) / this.runnable;
    this.last = now;
    return this.clock;
  }

  /** A task can run from now: the clock at which it starts being charged. */
  enter(): number {
    const at = this.virtual();
    this.runnable++;
    return at;
  }

  /** A task waits or is done: the clock at which it stops being charged. */
  leave(): number {
    const at = this.virtual();
    this.runnable--;
    return at;
  }
}

/** This thread's shares: every simulation and signature check in it. */
export const threadShares = new ThreadShares();

export class ComputeBudget {
  /** Compute charged in finished runnable periods. */
  private charged = 0;
  /** The virtual clock when the current runnable period began; undefined while waiting or ended. */
  private since: number | undefined;
  private ended = false;

  constructor(
    readonly budgetMs: number,
    private readonly shares = threadShares,
  ) {
    this.since = shares.enter();
  }

  /** Awaits an EL read (or a one-time load), not counted as compute. */
  async waiting<T>(read: Promise<T>): Promise<T> {
    if (this.since === undefined) return read;
    this.charged += this.shares.leave() - this.since;
    this.since = undefined;
    try {
      return await read;
    } finally {
      if (!this.ended) this.since = this.shares.enter();
    }
  }

  /** Compute milliseconds so far. */
  computeMs(): number {
    return this.charged + (this.since === undefined ? 0 : this.shares.virtual() - this.since);
  }

  /** Throws OverBudget once the compute time passes the budget. */
  check(): void {
    if (this.computeMs() > this.budgetMs) throw new OverBudget(`over the simulation budget of ${this.budgetMs} ms`);
  }

  /** The simulation is over: it no longer takes a share (idempotent). */
  end(): void {
    if (this.since !== undefined) this.charged += this.shares.leave() - this.since;
    this.since = undefined;
    this.ended = true;
  }
}
