/**
 * The public mempool's rules for a frame transaction beyond its validity (frame-transactions.md
 * section 6 item 7, EIP-8141 "Mempool"): the expiry frame first, a validation prefix of a shape
 * the mempool recognises, within its gas budgets. A block may hold what these refuse; the gate
 * (and any mempool) may not. The prefix itself runs under the trace rules (validate-prefix.ts).
 */
import { APPROVE_BOTH, APPROVE_EXECUTION, APPROVE_PAYMENT, ATOMIC, checkStaticValidity, isSender } from '../frame-checks.js';
import { FrameMode, type Frame, type FrameTransaction } from '../frame-codec.js';
import { refuse } from '../refusal.js';
import { SCHEMES } from '../signatures.js';

export const PREFIX_GAS_BUDGET = 100_000n;
export const PREFIX_STATE_GAS_BUDGET = 500_000n;

export interface FrameLimits {
  readonly chainId: bigint;
  /** Prefix execution + verification gas; never below the reference's 100 000. */
  readonly prefixGasBudget: bigint;
  readonly prefixStateGasBudget: bigint;
}

export interface FrameFacts {
  /** Who pays: the sender for self shapes, the pay frame's target otherwise. */
  readonly payer: string;
  readonly maxGas: bigint;
  readonly maxCost: bigint;
  /** EIP-8141 block-level accounting: max(intrinsic + Σ execution, calldata floor), and Σ state gas. */
  readonly executionReservation: bigint;
  readonly stateReservation: bigint;
  /** The expiry frame's deadline (unix seconds), if the transaction has one. */
  readonly deadline: bigint | undefined;
  /** Index of the frame that grants payment: the end of the validation prefix. */
  readonly prefixEnd: number;
  /**
   * The validation work the transaction asks of the gate: the prefix frames' execution limits
   * plus its entries' verification gas (at most the prefix budget).
   */
  readonly prefixGas: bigint;
}

/** Static validity, then the pin's public-mempool rules: the expiry frame first, a recognised prefix within its budgets. */
export function checkFrameTransaction(tx: FrameTransaction, limits: FrameLimits): FrameFacts {
  const { gas, expiry } = checkStaticValidity(tx, limits.chainId);
  if (expiry !== undefined && expiry.index !== 0) refuse('expiry-invalid', `frame ${expiry.index}: the expiry frame must be frame 0`);
  const { payerTarget, prefixEnd } = checkPrefixShape(tx, expiry !== undefined ? 1 : 0);
  // The expiry frame is part of the validation prefix: its limit counts against the budget.
  const prefixGas = checkPrefixBudgets(tx, prefixEnd, limits);
  return {
    payer: payerTarget ?? tx.sender,
    maxGas: gas.maxGas,
    maxCost: gas.maxGas * tx.maxFeePerGas,
    executionReservation: gas.capped,
    stateReservation: gas.maxGas - gas.capped,
    deadline: expiry?.deadline,
    prefixEnd,
    prefixGas,
  };
}

/** Item 7: the validation prefix is [self], [deploy, self], [only, pay] or [deploy, only, pay]. */
function checkPrefixShape(tx: FrameTransaction, start: number): { payerTarget: string | undefined; prefixEnd: number } {
  const at = (i: number) => tx.frames[start + i];
  const is = (frame: Frame | undefined, mode: FrameMode, flags: number, toSender: boolean) =>
    frame !== undefined && frame.mode === mode && (frame.flags & ~ATOMIC) === flags && (!toSender || isSender(tx, frame.target));
  const deploy = (f: Frame | undefined) => is(f, FrameMode.Default, 0, false);
  const self = (f: Frame | undefined) => is(f, FrameMode.Verify, APPROVE_BOTH, true);
  const only = (f: Frame | undefined) => is(f, FrameMode.Verify, APPROVE_EXECUTION, true);
  const pay = (f: Frame | undefined) => is(f, FrameMode.Verify, APPROVE_PAYMENT, false);
  const d = deploy(at(0)) ? 1 : 0;
  let prefixEnd: number;
  let payerTarget: string | undefined;
  if (self(at(d))) {
    prefixEnd = start + d;
  } else if (only(at(d)) && pay(at(d + 1))) {
    prefixEnd = start + d + 1;
    payerTarget = tx.frames[prefixEnd]!.target;
  } else {
    refuse('prefix-shape', 'frames must start with [self], [deploy, self], [only, pay] or [deploy, only, pay]');
  }
  for (let i = start; i <= prefixEnd; i++) {
    if ((tx.frames[i]!.flags & ATOMIC) !== 0) refuse('prefix-shape', `frame ${i}: prefix frames cannot be atomic`);
  }
  for (let i = prefixEnd + 1; i < tx.frames.length; i++) {
    if (tx.frames[i]!.mode === FrameMode.Verify) refuse('prefix-shape', `frame ${i}: no VERIFY frame after the payment grant`);
  }
  return { payerTarget, prefixEnd };
}

/** Refuses a prefix over its budgets; returns its execution plus verification gas. */
function checkPrefixBudgets(tx: FrameTransaction, prefixEnd: number, limits: FrameLimits): bigint {
  let execution = 0n;
  let state = 0n;
  for (let i = 0; i <= prefixEnd; i++) {
    execution += tx.frames[i]!.executionGas;
    state += tx.frames[i]!.stateGas;
  }
  for (const entry of tx.signatures) execution += SCHEMES.get(entry.scheme)!.verificationGas;
  if (execution > limits.prefixGasBudget) {
    refuse('prefix-gas', `validation prefix needs ${execution} gas, over the budget of ${limits.prefixGasBudget}`);
  }
  if (state > limits.prefixStateGasBudget) {
    refuse('prefix-gas', `validation prefix needs ${state} state gas, over the budget of ${limits.prefixStateGasBudget}`);
  }
  return execution;
}
