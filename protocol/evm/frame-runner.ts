/**
 * One frame of a frame transaction, run as EIP-8141 "Behavior" has it, for both uses: the gate's
 * validation prefix (mempool/validate-prefix.ts) and the devnet's full execution (execute.ts).
 *
 * - The frame's entry charges its target's EIP-2929 access (the sender and the precompiles are
 *   warm, and the block's coinbase when the block is known; a target stays warm for later
 *   frames only if the frame succeeds: each frame runs in its own journal checkpoint).
 * - The expiry frame runs the canonical verifier's 51 gas, its deadline compared with the
 *   block's timestamp (the gate's admission compares it with the head's).
 * - A VERIFY frame whose target has no code runs default code (approval.ts), no EVM.
 *   These three are the protocol-defined step, EVM-free (defined-frames.ts), which direct
 *   evaluation takes alone.
 * - Otherwise the EVM runs the frame: VERIFY as a static call from the entry point 0xaa, SENDER
 *   from the sender, DEFAULT from the entry point, on the frame's own execution limit less its
 *   entry charge and its own state-gas pool (EIP-8037 charges drawn from it, never spilled:
 *   the package's reservoir is the pool, patches/ makes exhausting it a halt).
 * - APPROVE(payment) increments the sender's nonce (creating it for state gas if it does not
 *   exist) and collects the maximum cost from the payer, as the chain does.
 */
import { EVM, EVMMockBlockchain } from '@ethereumjs/evm';
import { Account, bytesToHex, createAddressFromString, hexToBytes, type Address } from '@ethereumjs/util';
import { Approvals, NEW_ACCOUNT_STATE_GAS } from '../approval.js';
import { CHAIN } from '../chain.js';
import { entryCharge, runDefaultCode } from '../defined-frames.js';
import { type Frame, FrameMode, type FrameTransaction } from '../frame-codec.js';
import { curveBackends } from './curves.js';
import { frameStateGasPatched } from './evm-patch.js';
import type { AddOpcode } from './evm-types.js';
import { COMMON, isPrecompile, PRECOMPILES } from './fork.js';
import { type CompletedFrame, type FrameContext, frameOpcodes, journalApprovals } from './frame-opcodes.js';
import { pointEvaluationPrecompile } from './kzg.js';
import type { OverlayStateManager } from './overlay-state.js';
import { StateGasOwners } from './state-gas-owners.js';

const ENTRY_POINT = createAddressFromString('0x00000000000000000000000000000000000000aa');
/** Whether the installed package carries the frame pools: it cannot change while the process runs. */
const PATCHED = frameStateGasPatched();

/** The block a transaction is executed in. */
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

/** A frame as it ran: its receipt, its refund counter, and for a failure the cause a refusal names. */
export interface FrameOutcome {
  readonly result: FrameResult;
  readonly refund: bigint;
  readonly cause?: string;
  readonly detail?: string;
  /** A revert's return data (0x hex). */
  readonly output?: string;
}

export interface RunnerOptions {
  readonly tx: FrameTransaction;
  readonly maxCost: bigint;
  readonly state: OverlayStateManager;
  /** Full execution's block; absent for the validation prefix (judged for a block not yet proposed). */
  readonly block?: ExecutionBlock;
  readonly gasPrice?: bigint;
  /** Opcodes beyond the frame instructions (the validation prefix's trace rules). */
  readonly opcodes?: readonly AddOpcode[];
  /** Wraps what the runner waits on that is not compute (the precompiles' libraries loading). */
  readonly waiting?: <T>(work: Promise<T>) => Promise<T>;
  /** Hears every call frame that fails, with its error. */
  readonly onCallFailed?: (error: string) => void;
}

export class FrameRunner {
  readonly ctx: FrameContext;
  readonly approvals: Approvals;
  /** Each frame's receipt, in order (FRAMEPARAM reads them). */
  readonly results: FrameResult[];
  private readonly owners: StateGasOwners;

  private constructor(
    private readonly options: RunnerOptions,
    readonly evm: EVM,
    ctx: FrameContext,
    owners: StateGasOwners,
  ) {
    this.ctx = ctx;
    this.approvals = ctx.approvals;
    this.results = ctx.completed as FrameResult[];
    this.owners = owners;
  }

  static async create(options: RunnerOptions): Promise<FrameRunner> {
    if (!PATCHED) throw new Error('@ethereumjs/evm lacks the frame state-gas patch (patches/): npm ci applies it');
    const { tx, maxCost, state, block } = options;
    const waiting = options.waiting ?? (<T>(work: Promise<T>) => work);
    const sender = createAddressFromString(tx.sender);
    const account = async (address: Address) => (await state.getAccount(address)) ?? new Account();
    const results: FrameResult[] = [];
    let evm: EVM | undefined;
    const ctx: FrameContext = {
      tx,
      maxCost,
      approvals: new Approvals(tx, (await state.getAccount(sender)) !== undefined),
      frameIndex: 0,
      completed: results,
      get stateGasLeft() {
        return evm!.stateGasReservoir;
      },
      set stateGasLeft(value: bigint) {
        evm!.stateGasReservoir = value;
      },
      granted: [],
      approveRefused: undefined,
      balanceOf: async (address) => (await account(createAddressFromString(address))).balance,
      // APPROVE(payment): the sender may be created (state gas), its nonce goes up, the payer pays max_cost.
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
    const owners = new StateGasOwners(ctx);
    const { bls, bn254 } = await waiting(curveBackends());
    // Not createEVM: it replaces any `bn254` given with its pure-JS default.
    evm = new EVM({
      common: COMMON,
      blockchain: new EVMMockBlockchain(),
      stateManager: state,
      customOpcodes: [...frameOpcodes(ctx), owners.sstore(), ...(options.opcodes ?? [])],
      customPrecompiles: [pointEvaluationPrecompile(waiting)],
      bls,
      bn254,
    });
    (evm as EVM & { frameStateGasPools: boolean }).frameStateGasPools = true;
    const warm = [tx.sender, ...PRECOMPILES, ...(block === undefined ? [] : [block.coinbase])];
    for (const address of warm) evm.journal.addAlwaysWarmAddress(address.slice(2));
    journalApprovals(evm, ctx, options.onCallFailed);
    owners.journalCalls(evm);
    return new FrameRunner(options, evm, ctx, owners);
  }

  /** A checkpoint of everything a frame changes: state, warmth, state-gas ownership and receipts. */
  async checkpoint(): Promise<void> {
    this.owners.checkpoint();
    await this.evm.journal.checkpoint();
  }

  async commit(): Promise<void> {
    this.owners.commit();
    await this.evm.journal.commit();
  }

  async revert(): Promise<void> {
    this.owners.revert();
    await this.evm.journal.revert();
  }

  /** Runs frame `i` in its own checkpoint, kept only if it succeeds; its receipt is appended. */
  async run(i: number): Promise<FrameOutcome> {
    const frame = this.options.tx.frames[i]!;
    this.ctx.frameIndex = i;
    this.ctx.granted = [];
    this.ctx.approveRefused = undefined;
    this.ctx.stateGasLeft = frame.stateGas;
    this.evm.transientStorage.clear();
    await this.checkpoint();
    let outcome: FrameOutcome;
    try {
      outcome = await this.body(i, frame);
    } catch (err) {
      await this.revert();
      throw err;
    }
    if (outcome.result.status === 1) await this.commit();
    else await this.revert();
    this.results.push(outcome.result);
    return outcome;
  }

  private async body(i: number, frame: Frame): Promise<FrameOutcome> {
    const { tx, block, state, maxCost } = this.options;
    const { evm, ctx, approvals } = this;
    const target = frame.target ?? tx.sender;
    const to = createAddressFromString(target);
    const entry = evm.journal.isWarmedAddress(to.bytes) ? CHAIN.warmAccountAccessGas : CHAIN.coldAccountAccessGas;
    evm.journal.addWarmedAddress(to.bytes);
    const done = (
      status: 0 | 1,
      executionGas: bigint,
      failure?: { cause: string; detail?: string; output?: string },
      logs: FrameLog[] = [],
      refund = 0n,
    ) => ({
      result: { status, executionGas, stateGas: status === 1 ? frame.stateGas - ctx.stateGasLeft : 0n, logs },
      refund,
      ...failure,
    });
    const halted = (cause: string, detail?: string) => done(0, frame.executionGas, { cause, detail });
    const charge = entryCharge(i, frame, entry);
    if (!charge.ok) return halted(charge.cause, charge.detail);
    if (charge.expiry) {
      const deadline = frame.data.length === 8 ? Buffer.from(frame.data).readBigUInt64BE() : -1n;
      const passed = block === undefined || block.timestamp <= deadline;
      return done(passed ? 1 : 0, charge.gas, passed ? undefined : { cause: 'reverted', detail: 'past its deadline' });
    }
    if (frame.value > 0n && ((await state.getAccount(createAddressFromString(tx.sender)))?.balance ?? 0n) < frame.value) {
      return done(0, entry, { cause: 'reverted', detail: 'the sender cannot cover the value' });
    }
    const code = await state.getCode(to);
    if (frame.mode === FrameMode.Verify && code.length === 0 && !isPrecompile(target)) {
      const outcome = await runDefaultCode(tx, frame, approvals, maxCost, ctx.balanceOf, ctx.stateGasLeft);
      if (!outcome.ok) {
        return outcome.halt ? halted(outcome.cause, outcome.detail) : done(0, entry, { cause: outcome.cause, detail: outcome.detail });
      }
      ctx.granted.push(outcome.scope);
      await ctx.onApproved!(outcome.scope, target);
      return done(1, entry);
    }
    const caller = frame.mode === FrameMode.Sender ? createAddressFromString(tx.sender) : ENTRY_POINT;
    const { execResult } = await evm.runCall({
      caller,
      origin: caller,
      to,
      value: frame.value,
      data: frame.data,
      gasLimit: frame.executionGas - entry,
      isStatic: frame.mode === FrameMode.Verify,
      skipNonceIncrement: true,
      ...(block === undefined ? {} : { block: evmBlock(block) as never, gasPrice: this.options.gasPrice }),
    });
    const error: string | undefined = execResult.exceptionError?.error;
    if (error === 'revert') {
      const output = bytesToHex(execResult.returnValue);
      return done(0, entry + execResult.executionGasUsed, { cause: 'reverted', detail: ctx.approveRefused, output });
    }
    // The EVM runs 0xFE itself, whatever the opcode table says.
    if (error === 'invalid opcode') return halted('banned opcode INVALID');
    if (error === 'out of gas' || error === 'out of state gas') return halted(error, ctx.approveRefused);
    if (error !== undefined) return halted(`halted: ${error}`, ctx.approveRefused);
    const logs = (execResult.logs ?? []).map(([address, topics, data]) => ({
      address: bytesToHex(address),
      topics: topics.map((topic) => bytesToHex(topic)),
      data: bytesToHex(data),
    }));
    return done(1, entry + execResult.executionGasUsed, undefined, logs, execResult.gasRefund ?? 0n);
  }
}

function evmBlock(block: ExecutionBlock) {
  return {
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
}
