/**
 * Runs a frame transaction's validation prefix in an embedded EVM (@ethereumjs/evm at the fork of
 * fork.ts, with the EIP-8141 instructions and the trace rules as custom opcodes) against the EL's
 * head state (frame-transactions.md section 8):
 *
 * - each frame with its own `limits.execution`, less its target's EIP-2929 entry charge (the
 *   sender and the precompiles are warm; a target stays warm for later frames; the head's
 *   coinbase is not: the transaction runs in a block someone else proposes);
 * - VERIFY frames as static calls from the entry point 0xaa, the deploy frame as a plain call;
 * - a frame whose target has no code runs default code (approval.ts), as direct evaluation does;
 * - it stops once the frame that sets the payer completes: later frames are not the gate's.
 *
 * Throws a `verify-rejected` Refusal naming the frame and the cause; either way, what the verdict
 * rests on (every account, code and sender slot read) goes with it. Past its compute budget
 * (budget.ts) a simulation is aborted and refused with the cause "over the simulation budget";
 * anything else it throws that is not a verdict or an unreadable EL (a bug: in this code, the
 * EVM or a precompile's library) is refused too, with the cause "simulation error: <class>", as
 * a `SimulationFault` carrying what to log.
 */
import { EVM, EVMMockBlockchain } from '@ethereumjs/evm';
import { createAddressFromString } from '@ethereumjs/util';
import {
  Approvals,
  COLD_ACCOUNT_ACCESS_GAS,
  defaultCodeScope,
  deployStateGas,
  EXPIRY_VERIFIER,
  EXPIRY_VERIFIER_GAS,
  type FrameFacts,
  FrameMode,
  type FrameTransaction,
  WARM_ACCOUNT_ACCESS_GAS,
} from '../../../protocol/index.js';
import { describeFault, frameRefusal, Refusal, refuseFrame, Unavailable } from '../errors.js';
import type { Head, HeadState } from '../state.js';
import {
  COMMON,
  curveBackends,
  type FrameContext,
  frameOpcodes,
  installJumpAnalysisCache,
  isPrecompile,
  journalApprovals,
  pointEvaluationPrecompile,
  PRECOMPILES,
  type RuleContext,
  validationRules,
} from '../../../protocol/evm/index.js';
import { ComputeBudget, DEFAULT_SIMULATION_BUDGET_MS, OverBudget } from './budget.js';
import { HeadStateManager } from './head-state-manager.js';

const ENTRY_POINT = createAddressFromString('0x00000000000000000000000000000000000000aa');

/** An unexpected error, refused as a verdict; `bug` (its class, message and place) is for the operator's log. */
export class SimulationFault extends Refusal {
  constructor(
    frame: number,
    mode: 'VERIFY' | 'deploy',
    readonly bug: string,
    errorClass: string,
  ) {
    const { reason, detail, extra } = frameRefusal(frame, mode, `simulation error: ${errorClass}`);
    super(reason, detail, extra);
  }
}

/** Where the simulation is: the frame a refusal that is not a rule's names. */
interface Progress {
  frame: number;
  mode: 'VERIFY' | 'deploy';
}

function faultOf(err: unknown, { frame, mode }: Progress): SimulationFault {
  const { errorClass, bug } = describeFault(err);
  return new SimulationFault(frame, mode, bug, errorClass);
}

/**
 * Simulates within `budget`, attaching what was read to a refusal (the verdict cache keeps it).
 * The caller reads the compute time spent off the budget, whatever the outcome.
 */
export async function simulatePrefix(
  tx: FrameTransaction,
  facts: FrameFacts,
  head: Head,
  state: HeadState,
  budget = new ComputeBudget(DEFAULT_SIMULATION_BUDGET_MS),
): Promise<void> {
  const stateManager = new HeadStateManager(state, head, tx.sender, budget);
  const progress: Progress = { frame: 0, mode: 'VERIFY' };
  try {
    await run(tx, facts, stateManager, budget, progress);
  } catch (err) {
    if (err instanceof Unavailable) throw err;
    const refusal =
      err instanceof Refusal
        ? err
        : err instanceof OverBudget
          ? frameRefusal(progress.frame, progress.mode, 'over the simulation budget', `more than ${budget.budgetMs} ms of compute`)
          : faultOf(err, progress);
    refusal.dependencies = stateManager.dependencies();
    throw refusal;
  } finally {
    budget.end();
  }
}

async function run(
  tx: FrameTransaction,
  facts: FrameFacts,
  stateManager: HeadStateManager,
  budget: ComputeBudget,
  progress: Progress,
): Promise<void> {
  await budget.waiting(installJumpAnalysisCache());
  const senderAccount = await stateManager.getAccount(createAddressFromString(tx.sender));
  const senderExisted = senderAccount !== undefined;
  const senderCode = await stateManager.getCode(createAddressFromString(tx.sender));
  const approvals = new Approvals(tx, senderExisted);
  const balanceOf = async (address: string) => (await stateManager.getAccount(createAddressFromString(address)))?.balance ?? 0n;
  const frames: FrameContext = {
    tx,
    maxCost: facts.maxCost,
    approvals,
    frameIndex: 0,
    completed: [],
    stateGasLeft: 0n,
    granted: [],
    approveRefused: undefined,
    balanceOf,
  };
  // Every completed prefix frame succeeded (the simulation stops at the first failure) and drew
  // no state gas that FRAMEPARAM could see: APPROVE, the only charge, ends the frame.
  const completed = (executionGas: bigint) => frames.completed.push({ status: 1, executionGas, stateGas: 0n });
  const rules: RuleContext = {
    sender: tx.sender,
    senderHasCode: senderCode.length > 0,
    inDeployFrame: false,
    violation: undefined,
    codeAt: (address) => stateManager.getCode(createAddressFromString(address)),
    checkBudget: () => budget.check(),
  };
  const { bls, bn254 } = await budget.waiting(curveBackends());
  // Not createEVM: it replaces any `bn254` given with its pure-JS default.
  const evm = new EVM({
    common: COMMON,
    blockchain: new EVMMockBlockchain(),
    stateManager,
    customOpcodes: [...frameOpcodes(frames), ...validationRules(rules)],
    customPrecompiles: [pointEvaluationPrecompile((load) => budget.waiting(load))],
    bls,
    bn254,
  });
  for (const address of [tx.sender, ...PRECOMPILES]) evm.journal.addAlwaysWarmAddress(address.slice(2));
  // 0xFE runs natively in the EVM, past the rules' opcode table: a nested call that executes it is caught here.
  journalApprovals(evm, frames, (error) => {
    if (error === 'invalid opcode') rules.violation ??= 'banned opcode INVALID';
  });

  for (let i = 0; i <= facts.prefixEnd; i++) {
    const frame = tx.frames[i]!;
    const target = frame.target ?? tx.sender;
    const species = frame.mode === FrameMode.Verify ? 'VERIFY' : 'deploy';
    progress.frame = i;
    progress.mode = species;
    budget.check();
    const fail: (cause: string, detail?: string) => never = (cause, detail) => refuseFrame(i, species, cause, detail);
    frames.frameIndex = i;
    frames.stateGasLeft = frame.stateGas;
    frames.granted = [];
    frames.approveRefused = undefined;
    rules.inDeployFrame = frame.mode === FrameMode.Default;

    // Warm if an earlier frame touched it, as a target or from its code (the journal is shared across frames).
    const targetBytes = createAddressFromString(target).bytes;
    const entry = evm.journal.isWarmedAddress(targetBytes) ? WARM_ACCOUNT_ACCESS_GAS : COLD_ACCOUNT_ACCESS_GAS;
    evm.journal.addWarmedAddress(targetBytes);
    const isExpiry = frame.mode === FrameMode.Verify && target === EXPIRY_VERIFIER && i === 0;
    const needed = entry + (isExpiry ? EXPIRY_VERIFIER_GAS : 0n);
    if (needed > frame.executionGas) fail('out of gas', `the frame needs ${needed}, its limit is ${frame.executionGas}`);
    if (isExpiry) {
      completed(needed);
      continue;
    }

    const code = await stateManager.getCode(createAddressFromString(target));
    if (code.length === 0 && !isPrecompile(target)) {
      // Default code: no EVM. A deploy frame aimed here installs nothing (checked below).
      if (frame.mode === FrameMode.Verify) {
        const scope = defaultCodeScope(tx, frame);
        if ('why' in scope) fail('reverted', scope.why);
        const outcome = await approvals.approve(frame, target, scope.scope, facts.maxCost, () => balanceOf(target));
        if (!outcome.ok) fail(outcome.halt ? 'out of state gas' : 'reverted', outcome.why);
        frames.granted.push(scope.scope);
      }
      completed(entry);
    } else {
      // Each frame runs on its own execution limit and nothing more. (Without EIP-8037's second
      // dimension in this EVM a deploy frame also pays its state growth from it: conservative,
      // it may refuse a deploy the EL would run on state gas; never the reverse.)
      const gasLimit = frame.executionGas - entry;
      const result = await evm.runCall({
        caller: ENTRY_POINT,
        origin: ENTRY_POINT,
        to: createAddressFromString(target),
        data: frame.data,
        gasLimit,
        isStatic: frame.mode === FrameMode.Verify,
        skipNonceIncrement: true,
      });
      if (rules.violation !== undefined) fail(rules.violation);
      const error = result.execResult.exceptionError?.error;
      if (error === 'revert') fail('reverted', frames.approveRefused);
      // The EVM runs 0xFE itself, whatever the opcode table says; every other undefined byte is named by the rules.
      if (error === 'invalid opcode') fail('banned opcode INVALID');
      if (error !== undefined) fail(error === 'out of gas' ? 'out of gas' : `halted: ${error}`, frames.approveRefused);
      completed(entry + result.execResult.executionGasUsed);
    }

    if (frame.mode === FrameMode.Default) {
      // EIP-8141: the deploy frame must itself install non-empty code at the sender.
      const installed = stateManager.writtenCode().includes(tx.sender)
        ? await stateManager.getCode(createAddressFromString(tx.sender))
        : new Uint8Array(0);
      if (installed.length === 0) {
        fail(
          'no code at the sender after deploy',
          rules.senderHasCode ? 'the deploy frame installed none; the code there was already' : undefined,
        );
      }
      if (stateManager.writtenCode().some((address) => address !== tx.sender)) fail('state change outside the sender');
      // EIP-8037 in the frame's own pool: this EVM charges none of it, so the deploy frame's
      // creations are priced here, once it has run (a slot set and cleared within it is not seen).
      const needed = deployStateGas({ created: !senderExisted, codeBytes: installed.length, newSlots: stateManager.newSlotsOf(tx.sender) });
      if (needed > frame.stateGas) {
        fail('out of state gas', `its creations need ${needed} state gas (EIP-8037), the frame's limit is ${frame.stateGas}`);
      }
      approvals.senderCreated();
      rules.senderHasCode = true;
      continue;
    }
    const required = BigInt(frame.flags & 3);
    if (frames.granted.length === 0) fail('no APPROVE', frames.approveRefused);
    if (frames.granted.length !== 1 || frames.granted[0] !== required) {
      fail('wrong APPROVE scope', `granted ${frames.granted.join(', ')}, the frame calls for exactly ${required}`);
    }
  }
}
