/**
 * The step of a protocol-defined frame (EIP-8141, "Direct Evaluation of Protocol-Defined
 * Frames"), without an EVM: the charge at a frame's entry (its target's access, and the expiry
 * frame's verifier), and default code in a VERIFY frame aimed at a code-less account. The frame
 * runner takes this step for such frames (evm/frame-runner.ts) and direct evaluation takes only
 * this step (direct-evaluation.ts): one definition, so the two cannot drift apart.
 */
import { type Approvals, defaultCodeScope } from './approval.js';
import { CHAIN } from './chain.js';
import { type Frame, FrameMode, type FrameTransaction } from './frame-codec.js';

/** Why a step failed: `halt` (all the frame's gas spent) or a revert (only what was used). */
export interface StepFailure {
  readonly ok: false;
  readonly halt: boolean;
  readonly cause: string;
  readonly detail?: string;
}

/**
 * The expiry frame: frame 0, a VERIFY frame whose `target` names the expiry verifier (EIP-8141:
 * the field itself, as the static checks read it; a frame without one runs at the sender, even
 * a sender at that address, and must approve like any other).
 */
export const isExpiryFrame = (i: number, frame: Frame): boolean =>
  i === 0 && frame.mode === FrameMode.Verify && frame.target === CHAIN.expiryVerifier;

/**
 * What frame `i` costs at entry, given what its target's access costs (EIP-2929: cold, or warm
 * once touched): the access, plus the verifier's passing path for the expiry frame. A limit
 * below it halts the frame as out of gas.
 */
export function entryCharge(
  i: number,
  frame: Frame,
  accessGas: bigint,
): { readonly ok: true; readonly gas: bigint; readonly expiry: boolean } | StepFailure {
  const expiry = isExpiryFrame(i, frame);
  const gas = accessGas + (expiry ? CHAIN.expiryVerifierGas : 0n);
  if (gas > frame.executionGas)
    return { ok: false, halt: true, cause: 'out of gas', detail: `the frame needs ${gas}, its limit is ${frame.executionGas}` };
  return { ok: true, gas, expiry };
}

/**
 * Default code run in a VERIFY frame (approval.ts): the scope it approved, the approval context
 * updated; or why it reverted, or halted (a payment that creates the sender without the state
 * gas for it). `stateGasLeft` is the frame's pool.
 */
export async function runDefaultCode(
  tx: FrameTransaction,
  frame: Frame,
  approvals: Approvals,
  maxCost: bigint,
  balanceOf: (address: string) => Promise<bigint>,
  stateGasLeft = frame.stateGas,
): Promise<{ readonly ok: true; readonly scope: bigint } | StepFailure> {
  const target = frame.target ?? tx.sender;
  const code = defaultCodeScope(tx, frame);
  if ('why' in code) return { ok: false, halt: false, cause: 'reverted', detail: code.why };
  const outcome = await approvals.approve(frame, target, code.scope, maxCost, () => balanceOf(target), stateGasLeft);
  if (!outcome.ok) return { ok: false, halt: outcome.halt, cause: outcome.halt ? 'out of state gas' : 'reverted', detail: outcome.why };
  return { ok: true, scope: code.scope };
}
