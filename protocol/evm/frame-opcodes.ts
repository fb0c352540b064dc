/**
 * The EIP-8141 instructions a VERIFY frame can use, as @ethereumjs/evm custom opcodes, exactly as
 * in the pinned text (shared/reference/eip-8141-3ceef8d.md, "APPROVE Instruction" and
 * "Introspection"): APPROVE 0xaa, TXPARAM 0xb0, FRAMEDATALOAD 0xb1, FRAMEDATACOPY 0xb2,
 * FRAMEPARAM 0xb3, SIGPARAM 0xb4, SIGDATACOPY 0xb5. Stacks list the top first.
 *
 * Gas: APPROVE charges RETURN's memory expansion and nothing else; the two copies are priced
 * exactly as CALLDATACOPY, whose gas handler they reuse (its operands sit in the same places).
 */
import type { EVM } from '@ethereumjs/evm';
import type { Approvals, ApprovalState } from '../approval.js';
import { FRAME_TX_TYPE, type FrameTransaction } from '../frame-codec.js';
import { addressWord, FORK_OPCODES, halt, word, type AddOpcode, type GasFunction } from './evm-types.js';

/** A completed frame as FRAMEPARAM reports it: status 0 failed, 1 succeeded, 2 skipped. */
export interface CompletedFrame {
  readonly status: number;
  readonly executionGas: bigint;
  readonly stateGas: bigint;
}

/** What the instructions read: the transaction, where execution is, and its approval context. */
export interface FrameContext {
  readonly tx: FrameTransaction;
  readonly maxCost: bigint;
  readonly approvals: Approvals;
  /** The frame running now. */
  frameIndex: number;
  /** Each completed frame, in order. */
  readonly completed: CompletedFrame[];
  /** State gas left in the frame running now (TXPARAM 0x0C). */
  stateGasLeft: bigint;
  /** Scopes granted by APPROVE in the current frame, in order. */
  granted: bigint[];
  /** Why the last refused APPROVE did not grant, for the refusal's detail. */
  approveRefused: string | undefined;
  balanceOf(address: string): Promise<bigint>;
  /** What a granted APPROVE does beyond the context (full execution: nonce, max cost, state gas). */
  onApproved?(scope: bigint, address: string): Promise<void>;
}

const RETURN_GAS = FORK_OPCODES.dynamicGasHandlers.get(0xf3) as GasFunction;
const CALLDATACOPY_GAS = FORK_OPCODES.dynamicGasHandlers.get(0x37) as GasFunction;

const ARBITRARY = 0x00;

/** A copy's gas, exactly CALLDATACOPY's (its operands sit where CALLDATACOPY's do; a fourth below them). */
const copyGas: GasFunction = async (runState, gas, common) => {
  runState.stack.peek(4);
  return CALLDATACOPY_GAS(runState, gas, common);
};

/** The value of `param` in a parameter table; an undefined one halts exceptionally. */
function paramOf(what: string, param: bigint, table: ReadonlyArray<() => bigint>): bigint {
  const value = param < BigInt(table.length) ? table[Number(param)] : undefined;
  if (value === undefined) halt(`undefined ${what}`);
  return value();
}

/** `length` bytes of `data` from `offset`, zero-padded past its end (CALLDATALOAD/COPY semantics). */
function slice(data: Uint8Array, offset: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  if (offset < BigInt(data.length)) out.set(data.subarray(Number(offset), Number(offset) + length));
  return out;
}

/** FRAMEDATACOPY and SIGDATACOPY: `(memOffset, dataOffset, length, index)` from the bytes `source(index)` gives, CALLDATACOPY's gas. */
function copyOpcode(opcode: number, opcodeName: string, source: (index: bigint) => Uint8Array): AddOpcode {
  return {
    opcode,
    opcodeName,
    baseFee: 3,
    gasFunction: copyGas,
    logicFunction: (runState) => {
      const [memOffset, dataOffset, length, index] = runState.stack.popN(4) as [bigint, bigint, bigint, bigint];
      const bytes = source(index);
      if (length !== 0n) runState.memory.write(Number(memOffset), Number(length), slice(bytes, dataOffset, Number(length)));
    },
  };
}

/**
 * APPROVE's effects go with the call frame that made them: one that fails (reverts or halts),
 * however deep, takes its approvals with it. `failed` hears each failing call frame's error.
 */
export function journalApprovals(evm: EVM, ctx: FrameContext, failed?: (error: string) => void): void {
  const marks: Array<{ granted: number; state: ApprovalState }> = [];
  evm.events.on('beforeMessage', () => {
    marks.push({ granted: ctx.granted.length, state: ctx.approvals.snapshot() });
  });
  evm.events.on('afterMessage', (result) => {
    const mark = marks.pop()!;
    const error = result.execResult.exceptionError?.error;
    if (error === undefined) return;
    failed?.(error);
    ctx.granted.length = mark.granted;
    ctx.approvals.restore(mark.state);
  });
}

/** APPROVE (0xaa): grants its scope to the frame, or reverts the call (halts past the state-gas pool). */
function approveOpcode(ctx: FrameContext): AddOpcode {
  const { tx } = ctx;
  return {
    opcode: 0xaa,
    opcodeName: 'APPROVE',
    baseFee: 0,
    gasFunction: async (runState, gas, common) => {
      runState.stack.peek(3);
      return RETURN_GAS(runState, gas, common);
    },
    logicFunction: async (runState) => {
      const [offset, length, scope] = runState.stack.popN(3) as [bigint, bigint, bigint];
      const data = length === 0n ? new Uint8Array(0) : runState.memory.read(Number(offset), Number(length));
      const frame = tx.frames[ctx.frameIndex]!;
      const address = runState.interpreter.getAddress().toString();
      const outcome = await ctx.approvals.approve(frame, address, scope, ctx.maxCost, () => ctx.balanceOf(address), ctx.stateGasLeft);
      if (outcome.ok) {
        ctx.granted.push(scope);
        await ctx.onApproved?.(scope, address);
        runState.interpreter.finish(data);
        return;
      }
      ctx.approveRefused = outcome.why;
      if (outcome.halt) halt('out of state gas');
      runState.interpreter.revert(new Uint8Array(0));
    },
  };
}

/** TXPARAM (0xb0): the transaction's fields and where execution stands. */
function txparamOpcode(ctx: FrameContext): AddOpcode {
  const { tx } = ctx;
  return {
    opcode: 0xb0,
    opcodeName: 'TXPARAM',
    baseFee: 2,
    logicFunction: (runState) => {
      const param = runState.stack.pop();
      runState.stack.push(
        paramOf('TXPARAM', param, [
          () => BigInt(FRAME_TX_TYPE),
          () => tx.nonce,
          () => addressWord(tx.sender),
          () => tx.maxPriorityFeePerGas,
          () => tx.maxFeePerGas,
          () => tx.maxFeePerBlobGas,
          () => ctx.maxCost,
          () => BigInt(tx.blobVersionedHashes.length),
          () => BigInt(tx.sigHash),
          () => BigInt(tx.frames.length),
          () => BigInt(ctx.frameIndex),
          () => BigInt(tx.signatures.length),
          () => ctx.stateGasLeft,
        ]),
      );
    },
  };
}

export function frameOpcodes(ctx: FrameContext): AddOpcode[] {
  const { tx } = ctx;
  const frameAt = (index: bigint) => {
    if (index >= BigInt(tx.frames.length)) halt('frame index out of bounds');
    return tx.frames[Number(index)]!;
  };
  const entryAt = (index: bigint) => {
    if (index >= BigInt(tx.signatures.length)) halt('signature index out of bounds');
    return tx.signatures[Number(index)]!;
  };
  /** A frame's receipt so far: only a completed frame has one. */
  const completedFrame = (index: bigint) => {
    if (index >= BigInt(ctx.frameIndex)) halt('frame not completed');
    return ctx.completed[Number(index)]!;
  };

  return [
    approveOpcode(ctx),
    txparamOpcode(ctx),
    {
      opcode: 0xb1,
      opcodeName: 'FRAMEDATALOAD',
      baseFee: 3,
      logicFunction: (runState) => {
        const [offset, index] = runState.stack.popN(2) as [bigint, bigint];
        runState.stack.push(word(slice(frameAt(index).data, offset, 32)));
      },
    },
    copyOpcode(0xb2, 'FRAMEDATACOPY', (index) => frameAt(index).data),
    {
      opcode: 0xb3,
      opcodeName: 'FRAMEPARAM',
      baseFee: 2,
      logicFunction: (runState) => {
        const [index, param] = runState.stack.popN(2) as [bigint, bigint];
        const frame = frameAt(index);
        runState.stack.push(
          paramOf('FRAMEPARAM', param, [
            () => addressWord(frame.target ?? tx.sender),
            () => frame.executionGas,
            () => BigInt(frame.mode),
            () => BigInt(frame.flags),
            () => BigInt(frame.data.length),
            () => BigInt(completedFrame(index).status),
            () => BigInt(frame.flags & 3),
            () => BigInt((frame.flags >> 2) & 1),
            () => frame.value,
            () => frame.stateGas,
            () => completedFrame(index).executionGas,
            () => completedFrame(index).stateGas,
          ]),
        );
      },
    },
    {
      opcode: 0xb4,
      opcodeName: 'SIGPARAM',
      baseFee: 2,
      logicFunction: (runState) => {
        const [index, param] = runState.stack.popN(2) as [bigint, bigint];
        const entry = entryAt(index);
        const arbitrary = entry.scheme === ARBITRARY;
        let value: bigint;
        if (param === 0n && !arbitrary) value = addressWord(entry.signer ?? tx.sender);
        else if (param === 1n) value = BigInt(entry.scheme);
        else if (param === 2n) value = entry.msg === undefined ? 0n : word(entry.msg);
        else if (param === 3n && arbitrary) value = BigInt(entry.signature.length);
        else halt('undefined SIGPARAM for this entry');
        runState.stack.push(value);
      },
    },
    copyOpcode(0xb5, 'SIGDATACOPY', (index) => {
      const entry = entryAt(index);
      if (entry.scheme !== ARBITRARY) halt('SIGDATACOPY of a protocol-validated entry');
      return entry.signature;
    }),
  ];
}
