/**
 * Full execution of one frame transaction (EIP-8141 "Behavior" and "Gas Accounting"), as the
 * devnet's execution stand-in runs it: the transaction's validity (static, fee, nonce,
 * signatures), every frame through the frame runner (frame-runner.ts) with atomic batches, then
 * settlement (storage refunds, the calldata floor, the payer's refund, the coinbase's priority
 * fee). It runs over `state`; the caller applies what it wrote.
 *
 * State gas is EIP-8037's inside the EVM, drawn from each frame's own pool, a slot's refill
 * attributed to the frame that created it (state-gas-owners.ts). No blobs (the chain carries none).
 */
import { Account, createAddressFromString, type Address } from '@ethereumjs/util';
import { checkStaticValidity, frameGas } from '../frame-checks.js';
import { FrameMode, type FrameTransaction } from '../frame-codec.js';
import { Refusal } from '../refusal.js';
import { verifyFrameSignatures } from '../signatures.js';
import { CHAIN_ID } from './fork.js';
import { type ExecutionBlock, type FrameResult, FrameRunner } from './frame-runner.js';
import type { AddOpcode } from './evm-types.js';
import type { OverlayStateManager } from './overlay-state.js';

const ATOMIC = 4;
const MAX_REFUND_QUOTIENT = 5n;

export interface ExecutedFrameTransaction {
  readonly payer: string;
  readonly frames: readonly FrameResult[];
  /** Why each failed frame failed (undefined for the others): the cause, and a revert's data. */
  readonly failures: readonly (FrameFailure | undefined)[];
  readonly gasUsed: bigint;
  readonly effectiveGasPrice: bigint;
}

export interface FrameFailure {
  readonly cause: string;
  readonly detail?: string;
  /** A revert's return data (0x hex). */
  readonly output?: string;
}

/** The EL's node-side reason for leaving a transaction out, as the node's drop statistics count it. */
export type SkipReason = 'fee_cap_too_low' | 'nonce_too_low' | 'nonce_too_high' | 'other';

/** The transaction cannot be included: nothing it did stays (nothing is charged). */
export class InvalidFrameTransaction extends Error {
  constructor(
    readonly reason: SkipReason,
    message: string,
    /** The VERIFY frame that failed, with why, when that is what made it invalid. */
    readonly verify?: { readonly frame: number } & FrameFailure,
  ) {
    super(message);
    this.name = 'InvalidFrameTransaction';
  }
}

const invalid = (reason: SkipReason, message: string, verify?: InvalidFrameTransaction['verify']): never => {
  throw new InvalidFrameTransaction(reason, message, verify);
};

export interface ExecutionOptions {
  /**
   * Whether the signature entries are verified first (the default). Gas estimation leaves it out:
   * its entries carry stand-ins of the right length, and default code and SIGPARAM read only
   * their scheme, signer and msg.
   */
  readonly verifySignatures?: boolean;
  /** Opcodes beyond the frame instructions (a compute budget's checks: evm-types.ts). */
  readonly opcodes?: readonly AddOpcode[];
}

export async function executeFrameTransaction(
  tx: FrameTransaction,
  block: ExecutionBlock,
  state: OverlayStateManager,
  options: ExecutionOptions = {},
): Promise<ExecutedFrameTransaction> {
  try {
    checkStaticValidity(tx, BigInt(CHAIN_ID));
  } catch (err) {
    if (err instanceof Refusal) invalid('other', err.message);
    throw err;
  }
  if (tx.maxFeePerGas < block.baseFee)
    invalid('fee_cap_too_low', `max fee per gas ${tx.maxFeePerGas} less than block base fee ${block.baseFee}`);
  const sender = createAddressFromString(tx.sender);
  const nonce = (await state.getAccount(sender))?.nonce ?? 0n;
  if (tx.nonce !== nonce) invalid(tx.nonce < nonce ? 'nonce_too_low' : 'nonce_too_high', `nonce ${tx.nonce}, the sender's is ${nonce}`);
  try {
    if (options.verifySignatures !== false) verifyFrameSignatures(tx);
  } catch (err) {
    if (err instanceof Refusal) invalid('other', err.message);
    throw err;
  }
  const gas = frameGas(tx);
  const maxCost = gas.maxGas * tx.maxFeePerGas;
  const priced = block.baseFee + tx.maxPriorityFeePerGas;
  const effectiveGasPrice = priced < tx.maxFeePerGas ? priced : tx.maxFeePerGas;

  const account = async (address: Address) => (await state.getAccount(address)) ?? new Account();
  const runner = await FrameRunner.create({ tx, maxCost, state, block, gasPrice: effectiveGasPrice, opcodes: options.opcodes });
  const { approvals, results } = runner;
  const failures: (FrameFailure | undefined)[] = [];
  let refundCounter = 0n;
  let batch: { start: number; refundCounter: bigint } | undefined;
  let skipping = false;
  try {
    for (let i = 0; i < tx.frames.length; i++) {
      const frame = tx.frames[i]!;
      const atomic = (frame.flags & ATOMIC) !== 0;
      if (skipping) {
        results.push({ status: 2, executionGas: 0n, stateGas: 0n, logs: [] });
        failures.push(undefined);
        skipping = atomic;
        continue;
      }
      if (atomic && batch === undefined) {
        batch = { start: i, refundCounter };
        await runner.checkpoint();
      }
      if (frame.mode === FrameMode.Sender && !approvals.senderApproved)
        invalid('other', `SENDER frame ${i} runs before the sender approved execution`);
      const { result, refund, cause, detail, output } = await runner.run(i);
      failures.push(result.status === 1 ? undefined : { cause: cause ?? 'failed', detail, output });
      // EIP-8037's existence rule, as APPROVE meets it: a deploy frame may have created the sender.
      if (!(await account(sender)).isEmpty()) approvals.senderCreated();
      if (frame.mode === FrameMode.Verify && result.status !== 1)
        invalid('other', `VERIFY frame ${i} failed`, { frame: i, ...failures[i]! });
      refundCounter += refund;
      if (batch === undefined) continue;
      if (result.status !== 1) {
        // Unroll the batch: its state, logs, state gas and refunds go; what ran keeps its status and execution gas.
        await runner.revert();
        for (let j = batch.start; j < i; j++) results[j] = { ...results[j]!, stateGas: 0n, logs: [] };
        refundCounter = batch.refundCounter;
        batch = undefined;
        skipping = atomic;
      } else if (!atomic) {
        await runner.commit();
        batch = undefined;
      }
    }
    if (approvals.payer === undefined) invalid('other', 'no frame approved payment');
  } catch (err) {
    if (batch !== undefined) await runner.revert();
    throw err;
  }

  const executionUsed = results.reduce((sum, frame) => sum + frame.executionGas, 0n);
  const stateUsed = results.reduce((sum, frame) => sum + frame.stateGas, 0n);
  const beforeRefund = gas.intrinsic + executionUsed + stateUsed;
  const cap = beforeRefund / MAX_REFUND_QUOTIENT;
  const afterRefund = beforeRefund - (refundCounter < cap ? refundCounter : cap);
  const executionGas = afterRefund - stateUsed > gas.calldataFloor ? afterRefund - stateUsed : gas.calldataFloor;
  const gasUsed = executionGas + stateUsed;
  const payer = createAddressFromString(approvals.payer!);
  const paying = await account(payer);
  paying.balance += maxCost - gasUsed * effectiveGasPrice;
  await state.putAccount(payer, paying);
  const coinbase = createAddressFromString(block.coinbase);
  const miner = await account(coinbase);
  miner.balance += gasUsed * (effectiveGasPrice - block.baseFee);
  await state.putAccount(coinbase, miner);
  return { payer: approvals.payer!, frames: results, failures, gasUsed, effectiveGasPrice };
}
