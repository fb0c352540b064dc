/**
 * Runs a frame transaction's validation prefix in the EIP-8141 EVM (protocol/evm: the frame
 * runner under the trace rules) against the EL's head state, read through the gate's
 * `HeadState` (cached per head) under the compute budget (budget.ts).
 *
 * Throws a `verify-rejected` Refusal naming the frame and the cause; either way, what the verdict
 * rests on (every account, code and sender slot read) goes with it. Past its compute budget
 * a simulation is aborted and refused with the cause "over the simulation budget";
 * anything else it throws that is not a verdict or an unreadable EL (a bug: in this code, the
 * EVM or a precompile's library) is refused too, with the cause "simulation error: <class>", as
 * a `SimulationFault` carrying what to log.
 */
import type { FrameFacts, FrameTransaction, StateDependencies } from '../../../../protocol/index.js';
import { OverlayStateManager, type StateReader } from '../../../../protocol/evm/index.js';
import { type PrefixProgress, validatePrefix } from '../../../../protocol/mempool/index.js';
import { describeFault, frameRefusal, OVER_SIMULATION_BUDGET, Refusal, SIMULATION_ERROR, Unavailable } from '../../errors.js';
import type { Head, HeadState } from '../../head/state.js';
import { ComputeBudget, DEFAULT_SIMULATION_BUDGET_MS, OverBudget } from './budget.js';

/** An unexpected error, refused as a verdict; `bug` (its class, message and place) is for the operator's log. */
export class SimulationFault extends Refusal {
  constructor(
    frame: number,
    mode: 'VERIFY' | 'deploy',
    readonly bug: string,
    errorClass: string,
  ) {
    const { reason, detail, extra } = frameRefusal(frame, mode, `${SIMULATION_ERROR}: ${errorClass}`);
    super(reason, detail, extra);
  }
}

function faultOf(err: unknown, { frame, mode }: PrefixProgress): SimulationFault {
  const { errorClass, bug } = describeFault(err);
  return new SimulationFault(frame, mode, bug, errorClass);
}

/**
 * Simulates within `budget`: what was read, with a refusal (the verdict cache keeps it) or as the
 * answer (an admission is revalidated against it, revalidation.ts). The caller reads the compute
 * time spent off the budget, whatever the outcome.
 */
export async function simulatePrefix(
  tx: FrameTransaction,
  facts: FrameFacts,
  head: Head,
  state: HeadState,
  budget = new ComputeBudget(DEFAULT_SIMULATION_BUDGET_MS),
): Promise<StateDependencies> {
  const reader: StateReader = {
    account: (address) => state.account(address, head),
    code: (address) => state.codeEntry(address, head),
    storage: (address, slot) => state.storage(address, slot, head),
    waiting: (read) => budget.waiting(read),
  };
  const stateManager = new OverlayStateManager(reader, tx.sender);
  const progress: PrefixProgress = { frame: 0, mode: 'VERIFY' };
  try {
    await validatePrefix({
      tx,
      facts,
      state: stateManager,
      progress,
      checkBudget: () => budget.check(),
      waiting: (work) => budget.waiting(work),
    });
    return stateManager.dependencies();
  } catch (err) {
    if (err instanceof Unavailable) throw err;
    const refusal =
      err instanceof Refusal
        ? err
        : err instanceof OverBudget
          ? frameRefusal(progress.frame, progress.mode, OVER_SIMULATION_BUDGET, `more than ${budget.budgetMs} ms of compute`)
          : faultOf(err, progress);
    refusal.dependencies = stateManager.dependencies();
    throw refusal;
  } finally {
    budget.end();
  }
}
