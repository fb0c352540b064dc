/**
 * Full execution of one frame transaction (EIP-8141 "Behavior" and "Gas Accounting"), for the
 * devnet's execution stand-in: every frame in its mode, APPROVE with the sender's nonce and the
 * max cost collected from the payer, value, atomic batches, then settlement (storage refunds,
 * the calldata floor, the payer's refund, the coinbase's priority fee). It runs in the EIP-8141
 * EVM (protocol/evm) over `state`; the caller applies what it wrote to the EL.
 *
 * EIP-7708 transfer logs come from the EVM (its fork activates 7708). A frame's entry warms its
 * target inside the frame's own checkpoint: a frame that fails leaves no warmth behind.
 *
 * Where this stand-in is simpler than the chain's client, said rather than hidden:
 * - the EVM has no EIP-8037 state-gas dimension: SSTORE, CREATE and code deposit are paid from
 *   execution gas; only the frame-level charges (APPROVE creating the sender, value sent to a
 *   new account) draw state gas, so state-gas refills never happen;
 * - no blobs (the chain carries none).
 */
import { createEVM } from '@ethereumjs/evm';
import { Account, bytesToHex, createAddressFromString, hexToBytes, type Address } from '@ethereumjs/util';
import {
  Approvals,
  checkStaticValidity,
  COLD_ACCOUNT_ACCESS_GAS,
  defaultCodeScope,
  EXPIRY_VERIFIER,
  EXPIRY_VERIFIER_GAS,
  type Frame,
  frameGas,
  FrameMode,
  type FrameTransaction,
  NEW_ACCOUNT_STATE_GAS,
  Refusal,
  verifyFrameSignatures,
  WARM_ACCOUNT_ACCESS_GAS,
} from '../../protocol/index.js';
import {
  CHAIN_ID,
  COMMON,
  type CompletedFrame,
  type FrameContext,
  frameOpcodes,
  isPrecompile,
  journalApprovals,
  PRECOMPILES,
} from '../../protocol/evm/index.js';
import type { HeadStateManager } from '../../plugins/gate/simulation/head-state-manager.js';

const ENTRY_POINT = createAddressFromString('0x00000000000000000000000000000000000000aa');
const ATOMIC = 4;
const MAX_REFUND_QUOTIENT = 5n;

export interface ExecutionBlock {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly baseFee: bigint;
  /** Lower-case 0x address. */
  readonly coinbase: string;
  readonly gasLimit: bigint;
  readonly prevRandao: string;
}

export interface FrameLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
}

/** One frame's receipt (EIP-8141 "Receipt Encoding"): status 0 failed, 1 succeeded, 2 skipped. */
export interface FrameResult extends CompletedFrame {
  readonly logs: readonly FrameLog[];
}

export interface ExecutedFrameTransaction {
  readonly payer: string;
  readonly frames: readonly FrameResult[];
  readonly gasUsed: bigint;
  readonly effectiveGasPrice: bigint;
}

/** The EL's node-side reason for leaving a transaction out, as the node's drop statistics count it. */
export type SkipReason = 'fee_cap_too_low' | 'nonce_too_low' | 'nonce_too_high' | 'other';

/** The transaction cannot be included: nothing it did stays (nothing is charged). */
export class InvalidFrameTransaction extends Error {
  constructor(
    readonly reason: SkipReason,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidFrameTransaction';
  }
}

const invalid = (reason: SkipReason, message: string): never => {
  throw new InvalidFrameTransaction(reason, message);
};

export async function executeFrameTransaction(
  tx: FrameTransaction,
  block: ExecutionBlock,
  state: HeadStateManager,
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
    verifyFrameSignatures(tx);
  } catch (err) {
    if (err instanceof Refusal) invalid('other', err.message);
    throw err;
  }
  const gas = frameGas(tx);
  const maxCost = gas.maxGas * tx.maxFeePerGas;
  const priced = block.baseFee + tx.maxPriorityFeePerGas;
  const effectiveGasPrice = priced < tx.maxFeePerGas ? priced : tx.maxFeePerGas;

  const account = async (address: Address) => (await state.getAccount(address)) ?? new Account();
  const approvals = new Approvals(tx, (await state.getAccount(sender)) !== undefined);
  const results: FrameResult[] = [];
  const ctx: FrameContext = {
    tx,
    maxCost,
    approvals,
    frameIndex: 0,
    completed: results,
    stateGasLeft: 0n,
    granted: [],
    approveRefused: undefined,
    balanceOf: async (address) => (await account(createAddressFromString(address))).balance,
    // APPROVE(payment): the sender's account may be created (state gas), its nonce goes up, the payer pays max_cost.
    async onApproved(scope, address) {
      if ((scope & 1n) === 0n) return;
      const from = await account(sender);
      if (from.isEmpty()) ctx.stateGasLeft -= NEW_ACCOUNT_STATE_GAS;
      from.nonce++;
      await state.putAccount(sender, from);
      const payer = createAddressFromString(address);
      const paying = await account(payer);
      paying.balance -= maxCost;
      await state.putAccount(payer, paying);
    },
  };
  const evm = await createEVM({ common: COMMON, stateManager: state, customOpcodes: frameOpcodes(ctx) });
  journalApprovals(evm, ctx);
  for (const address of [tx.sender, block.coinbase, ...PRECOMPILES]) evm.journal.addAlwaysWarmAddress(address.slice(2));
  const evmBlock = {
    header: {
      number: block.number,
      coinbase: createAddressFromString(block.coinbase),
      timestamp: block.timestamp,
      difficulty: 0n,
      prevRandao: hexToBytes(block.prevRandao as `0x${string}`),
      gasLimit: block.gasLimit,
      baseFeePerGas: block.baseFee,
      slotNumber: 0n,
      getBlobGasPrice: () => 1n,
    },
  };

  const runFrame = async (i: number, frame: Frame): Promise<{ result: FrameResult; refund: bigint }> => {
    const target = frame.target ?? tx.sender;
    const to = createAddressFromString(target);
    const entry = evm.journal.isWarmedAddress(to.bytes) ? WARM_ACCOUNT_ACCESS_GAS : COLD_ACCOUNT_ACCESS_GAS;
    evm.journal.addWarmedAddress(to.bytes);
    const done = (status: number, executionGas: bigint, logs: FrameLog[] = [], refund = 0n) => ({
      result: { status, executionGas, stateGas: status === 1 ? frame.stateGas - ctx.stateGasLeft : 0n, logs },
      refund,
    });
    const halted = () => done(0, frame.executionGas);
    if (entry > frame.executionGas) return halted();
    if (frame.mode === FrameMode.Verify && target === EXPIRY_VERIFIER && i === 0) {
      const used = entry + EXPIRY_VERIFIER_GAS;
      if (used > frame.executionGas) return halted();
      const deadline = frame.data.length === 8 ? Buffer.from(frame.data).readBigUInt64BE() : -1n;
      return done(block.timestamp <= deadline ? 1 : 0, used);
    }
    if (frame.mode === FrameMode.Sender && !approvals.senderApproved)
      invalid('other', `SENDER frame ${i} runs before the sender approved execution`);
    const caller = frame.mode === FrameMode.Sender ? sender : ENTRY_POINT;
    if (frame.value > 0n) {
      if ((await account(sender)).balance < frame.value) return done(0, entry);
      if ((await state.getAccount(to)) === undefined) {
        if (ctx.stateGasLeft < NEW_ACCOUNT_STATE_GAS) return halted();
        ctx.stateGasLeft -= NEW_ACCOUNT_STATE_GAS;
      }
    }
    const code = await state.getCode(to);
    if (frame.mode === FrameMode.Verify && code.length === 0 && !isPrecompile(target)) {
      // Default code: no EVM.
      const scope = defaultCodeScope(tx, frame);
      if ('why' in scope) return done(0, entry);
      const outcome = await approvals.approve(frame, target, scope.scope, maxCost, () => ctx.balanceOf(target));
      if (!outcome.ok) return outcome.halt ? halted() : done(0, entry);
      await ctx.onApproved!(scope.scope, target);
      return done(1, entry);
    }
    const { execResult } = await evm.runCall({
      caller,
      origin: caller,
      to,
      value: frame.value,
      data: frame.data,
      gasLimit: frame.executionGas - entry,
      isStatic: frame.mode === FrameMode.Verify,
      skipNonceIncrement: true,
      block: evmBlock as never,
      gasPrice: effectiveGasPrice,
    });
    const error = execResult.exceptionError?.error;
    if (error === 'revert') return done(0, entry + execResult.executionGasUsed);
    if (error !== undefined) return halted();
    const logs = (execResult.logs ?? []).map(([address, topics, data]) => ({
      address: bytesToHex(address),
      topics: topics.map((topic) => bytesToHex(topic)),
      data: bytesToHex(data),
    }));
    return done(1, entry + execResult.executionGasUsed, logs, execResult.gasRefund ?? 0n);
  };

  let refundCounter = 0n;
  let batch: { start: number; refundCounter: bigint } | undefined;
  let skipping = false;
  try {
    for (let i = 0; i < tx.frames.length; i++) {
      const frame = tx.frames[i]!;
      const atomic = (frame.flags & ATOMIC) !== 0;
      ctx.frameIndex = i;
      if (skipping) {
        results.push({ status: 2, executionGas: 0n, stateGas: 0n, logs: [] });
        skipping = atomic;
        continue;
      }
      if (atomic && batch === undefined) {
        batch = { start: i, refundCounter };
        await evm.journal.checkpoint();
      }
      ctx.granted = [];
      ctx.approveRefused = undefined;
      ctx.stateGasLeft = frame.stateGas;
      evm.transientStorage.clear();
      // The frame's own checkpoint: a frame that fails leaves nothing, not even its target's warmth.
      await evm.journal.checkpoint();
      let outcome: Awaited<ReturnType<typeof runFrame>>;
      try {
        outcome = await runFrame(i, frame);
      } catch (err) {
        await evm.journal.revert();
        throw err;
      }
      const { result, refund } = outcome;
      if (result.status === 1) await evm.journal.commit();
      else await evm.journal.revert();
      results.push(result);
      // EIP-8037's existence rule, as APPROVE meets it: a deploy frame may have created the sender.
      if (!(await account(sender)).isEmpty()) approvals.senderCreated();
      if (frame.mode === FrameMode.Verify && result.status !== 1) invalid('other', `VERIFY frame ${i} failed`);
      refundCounter += refund;
      if (batch === undefined) continue;
      if (result.status !== 1) {
        // Unroll the batch: its state, logs, state gas and refunds go; what ran keeps its status and execution gas.
        await evm.journal.revert();
        for (let j = batch.start; j < i; j++) results[j] = { ...results[j]!, stateGas: 0n, logs: [] };
        refundCounter = batch.refundCounter;
        batch = undefined;
        skipping = atomic;
      } else if (!atomic) {
        await evm.journal.commit();
        batch = undefined;
      }
    }
    if (approvals.payer === undefined) invalid('other', 'no frame approved payment');
  } catch (err) {
    if (batch !== undefined) await evm.journal.revert();
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
  return { payer: approvals.payer!, frames: results, gasUsed, effectiveGasPrice };
}
