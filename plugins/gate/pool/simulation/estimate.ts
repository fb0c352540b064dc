/**
 * `svc_estimateFrameGas` in a thread of the gate's estimate lane: the frame transaction run by
 * protocol/evm's estimator over the state of the block asked for, read through the thread's
 * `HeadState` (each account, code and slot once per block), under its compute budget
 * (`estimate_budget_ms`: every run of the estimate together, EL waits not counted) and a bound
 * on what it reads of the EL (MAX_ESTIMATE_READS).
 */
import type { FrameGasRequest } from '../../../../protocol/index.js';
import {
  budgetChecks,
  estimateFrameGas,
  executeFrameTransaction,
  FrameEstimateError,
  type FrameGasEstimate,
  OverlayStateManager,
  type StateReader,
} from '../../../../protocol/evm/index.js';
import type { HeadState } from '../../head/state.js';
import { type ComputeBudget, OverBudget } from './budget.js';

/**
 * Accounts, codes and slots one estimate may read from the EL: each is an EL call the compute
 * budget does not count (its waits are left out), and 16 million gas of cold reads would be
 * thousands of them. A transfer reads a handful; a contract call a few dozen.
 */
export const MAX_ESTIMATE_READS = 2_000;

export interface EstimateTask {
  readonly request: FrameGasRequest;
  /** A block tag, number (0x quantity) or hash. */
  readonly block: string;
}

/** An estimate, or why there is none (a frame named, a revert's data), or the block unknown. */
export type EstimateOutcome =
  | { readonly estimate: FrameGasEstimate }
  | { readonly failure: { readonly message: string; readonly frame?: number; readonly output?: string } }
  | { readonly unknownBlock: string };

export async function estimateInThread(
  { request, block: at }: EstimateTask,
  state: HeadState,
  budget: ComputeBudget,
): Promise<EstimateOutcome> {
  try {
    const block = await budget.waiting(state.block(at, true));
    if (block === null) return { unknownBlock: at };
    const { head, execution } = block;
    const read = new Set<string>();
    const counted = <T>(key: string, load: () => Promise<T>): Promise<T> => {
      read.add(key);
      if (read.size > MAX_ESTIMATE_READS) {
        throw new FrameEstimateError(
          `the transaction reads more state than an estimate may (${MAX_ESTIMATE_READS} accounts, codes and slots)`,
        );
      }
      return load();
    };
    const reader: StateReader = {
      account: (address) => counted(`a${address}`, () => state.account(address, head)),
      code: (address) => counted(`c${address}`, () => state.codeEntry(address, head)),
      storage: (address, slot) => counted(`s${address}${slot}`, () => state.storage(address, slot, head)),
      waiting: (wait) => budget.waiting(wait),
    };
    const nonce = request.nonceGiven ? request.tx.nonce : (await budget.waiting(state.account(request.tx.sender, head))).nonce;
    const opcodes = budgetChecks(() => budget.check());
    const estimate = await estimateFrameGas(
      { ...request, tx: { ...request.tx, nonce } },
      execution,
      (tx, inBlock) =>
        executeFrameTransaction(tx, inBlock, new OverlayStateManager(reader, tx.sender), { verifySignatures: false, opcodes }),
      () => budget.check(),
    );
    return { estimate };
  } catch (err) {
    if (err instanceof FrameEstimateError) return { failure: { message: err.message, frame: err.frame, output: err.output } };
    if (err instanceof OverBudget) return { failure: { message: `over the estimate's compute budget (${budget.budgetMs} ms)` } };
    throw err;
  } finally {
    budget.end();
  }
}
