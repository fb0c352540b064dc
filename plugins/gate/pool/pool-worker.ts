/**
 * Runs in a worker thread of the gate's pool (work-pool.ts): the expensive judgements, each
 * answered as plain data. `verify` checks a frame transaction's signature entries (and
 * `recover` a standard one's sender, where that runs in pure JS); `simulate`
 * runs its validation prefix in the embedded EVM, reading head state from the EL through this
 * thread's own upstream pool (separate from the one that streams reads to clients).
 */
import { workerData } from 'node:worker_threads';
import { Upstream, type UpstreamOptions } from '../../../src/plugin.js';
import {
  authoritiesOf,
  type FrameFacts,
  type FrameTransaction,
  recoverAddress,
  type SignedFrames,
  verifyFrameSignatures,
} from '../../../protocol/index.js';
import type { RecoverTask } from '../submission/decode.js';
import { Refusal, Unavailable } from '../errors.js';
import type { StateDependencies } from '../head/dependencies.js';
import { ComputeBudget, DEFAULT_ESTIMATE_BUDGET_MS, DEFAULT_SIMULATION_BUDGET_MS, threadShares } from './simulation/budget.js';
import type { EstimateOutcome, EstimateTask } from './simulation/estimate.js';
import { HeadState, type Head } from '../head/state.js';

export interface PoolRefusal {
  readonly refusal: {
    readonly reason: string;
    readonly detail: string;
    readonly extra?: Readonly<Record<string, string | number>>;
    readonly dependencies?: StateDependencies;
  };
}
export interface PoolUnavailable {
  readonly unavailable: string;
}

/** The decoded transaction travels as data (structured clone): the thread never decodes. */
export interface SimulateTask {
  readonly tx: FrameTransaction;
  readonly facts: FrameFacts;
  readonly head: Head;
}

export interface PoolSettings {
  readonly execution: UpstreamOptions;
  /** Compute milliseconds one simulation may take (`simulation_budget_ms`); the default when absent. */
  readonly simulationBudgetMs?: number;
  /** Compute milliseconds one gas estimate may take (`estimate_budget_ms`); the default when absent. */
  readonly estimateBudgetMs?: number;
}

/**
 * What `simulate` answers: the compute milliseconds it took (wall time less EL waits:
 * simulation/budget.ts), whatever the outcome, beside at most one of a refusal or an
 * unreadable EL (neither: admitted, with what it read). `bug`, with a refusal, says it came from an unexpected
 * error (its class, message and place): for a throttled log line; the refusal itself only
 * names the class.
 */
export interface SimulateAnswer {
  readonly computeMs: number;
  /** With an admission: what it read. */
  readonly dependencies?: StateDependencies;
  readonly refusal?: PoolRefusal['refusal'];
  readonly unavailable?: string;
  readonly bug?: string;
}

const settings = workerData as PoolSettings | undefined;
// Reads for the EVM; a head-long cache shared by every simulation this thread runs.
const state = settings && new HeadState(new Upstream({ ...settings.execution, retryClosedConnection: true }), 0);

function refusalOf(err: unknown): PoolRefusal {
  if (err instanceof Refusal)
    return { refusal: { reason: err.reason, detail: err.detail, extra: err.extra, dependencies: err.dependencies } };
  throw err;
}

export function verify(tx: SignedFrames): PoolRefusal | undefined {
  // Its time is shared out like a simulation's: simulations waiting behind it are not charged for it.
  threadShares.enter();
  try {
    verifyFrameSignatures(tx);
    return undefined;
  } catch (err) {
    return refusalOf(err);
  } finally {
    threadShares.leave();
  }
}

/** A standard transaction's sender, where recovery runs in pure JS (~1.7 ms: crypto-backend.ts); undefined for none. */
export function recover({ digest, r, s, yParity }: RecoverTask): string | undefined {
  threadShares.enter();
  try {
    return recoverAddress(digest, r, s, yParity);
  } finally {
    threadShares.leave();
  }
}

/** A type 0x04 transaction's authorities (protocol's `authoritiesOf`): one recovery per authorization. */
export function authorities({ bytes, chainId }: AuthoritiesTask): string[] {
  threadShares.enter();
  try {
    return authoritiesOf(bytes, chainId);
  } finally {
    threadShares.leave();
  }
}

/** What `authorities` reads: the raw transaction and the chain its authorizations must name (or 0). */
export interface AuthoritiesTask {
  readonly bytes: Uint8Array;
  readonly chainId: bigint;
}

let simulator: Promise<typeof import('./simulation/simulate.js')> | undefined;

/**
 * The EVM and its curve libraries, loaded with the first simulation (or as a simulation thread
 * starts, timed-worker.ts): a thread that only verifies signatures starts in a fraction of the
 * time (most frame transactions never need them).
 */
export function loadSimulator(): Promise<typeof import('./simulation/simulate.js')> {
  simulator ??= Promise.all([
    import('./simulation/simulate.js'),
    import('../../../protocol/evm/index.js').then(({ curveBackends }) => curveBackends()),
  ]).then(([module]) => module);
  return simulator;
}

export async function simulate({ tx, facts, head }: SimulateTask): Promise<SimulateAnswer> {
  const { simulatePrefix, SimulationFault } = await loadSimulator();
  // Charged from here: the EVM's first load in the thread is not the transaction's.
  const budget = new ComputeBudget(settings?.simulationBudgetMs ?? DEFAULT_SIMULATION_BUDGET_MS);
  try {
    const dependencies = await simulatePrefix(tx, facts, head, state!, budget);
    return { computeMs: budget.computeMs(), dependencies };
  } catch (err) {
    const computeMs = budget.computeMs();
    if (err instanceof Unavailable) return { computeMs, unavailable: err.message };
    const { refusal } = refusalOf(err);
    return err instanceof SimulationFault ? { computeMs, refusal, bug: err.bug } : { computeMs, refusal };
  }
}

/** What `estimate` answers: its compute milliseconds beside the outcome, or an unreadable EL. */
export type EstimateAnswer = { readonly computeMs: number } & (EstimateOutcome | PoolUnavailable);

export async function estimate(task: EstimateTask): Promise<EstimateAnswer> {
  await loadSimulator();
  const { estimateInThread } = await import('./simulation/estimate.js');
  const budget = new ComputeBudget(settings?.estimateBudgetMs ?? DEFAULT_ESTIMATE_BUDGET_MS);
  try {
    const outcome = await estimateInThread(task, state!, budget);
    return { computeMs: budget.computeMs(), ...outcome };
  } catch (err) {
    if (err instanceof Unavailable) return { computeMs: budget.computeMs(), unavailable: err.message };
    throw err;
  }
}
