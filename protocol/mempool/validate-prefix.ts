/**
 * A frame transaction's validation prefix run in the EIP-8141 EVM (frame-transactions.md
 * section 8), frame by frame through the frame runner, under the trace rules: it stops once the
 * frame that sets the payer completes, later frames are not the mempool's. Every prefix frame
 * must succeed with exactly the APPROVE its flags call for; a deploy frame must itself install
 * code at the sender and change nothing else (its state gas drawn from its own pool in the EVM).
 *
 * Throws a `verify-rejected` Refusal naming the frame and the cause. Anything else it throws
 * (the caller's budget, an unreadable state, a bug) passes through; `progress` says where it was.
 */
import { createAddressFromString } from '@ethereumjs/util';
import { FrameRunner, installJumpAnalysisCache, type OverlayStateManager } from '../evm/index.js';
import { isExpiryFrame } from '../defined-frames.js';
import { FrameMode, type FrameTransaction } from '../frame-codec.js';
import { refuseFrame } from '../refusal.js';
import type { FrameFacts } from './policy.js';
import { type RuleContext, validationRules } from './trace-rules.js';

/** Where the prefix is: the frame a failure that is not a rule's names. */
export interface PrefixProgress {
  frame: number;
  mode: 'VERIFY' | 'deploy';
}

export interface PrefixRun {
  readonly tx: FrameTransaction;
  readonly facts: FrameFacts;
  readonly state: OverlayStateManager;
  readonly progress: PrefixProgress;
  /** Throws once the run is over its compute budget; called between frames and at every loop and call. */
  readonly checkBudget: () => void;
  /** Wraps what the run waits on that is not compute. */
  readonly waiting: <T>(work: Promise<T>) => Promise<T>;
}

export async function validatePrefix({ tx, facts, state, progress, checkBudget, waiting }: PrefixRun): Promise<void> {
  await waiting(installJumpAnalysisCache());
  const senderAddress = createAddressFromString(tx.sender);
  const rules: RuleContext = {
    sender: tx.sender,
    senderHasCode: (await state.getCode(senderAddress)).length > 0,
    inDeployFrame: false,
    violation: undefined,
    codeAt: (address) => state.getCode(createAddressFromString(address)),
    checkBudget,
  };
  const runner = await FrameRunner.create({
    tx,
    maxCost: facts.maxCost,
    state,
    opcodes: validationRules(rules),
    waiting,
    // 0xFE runs natively in the EVM, past the rules' opcode table: a nested call that executes it is caught here.
    onCallFailed: (error) => {
      if (error === 'invalid opcode') rules.violation ??= 'banned opcode INVALID';
    },
  });

  for (let i = 0; i <= facts.prefixEnd; i++) {
    const frame = tx.frames[i]!;
    const species = frame.mode === FrameMode.Verify ? 'VERIFY' : 'deploy';
    progress.frame = i;
    progress.mode = species;
    checkBudget();
    const fail: (cause: string, detail?: string) => never = (cause, detail) => refuseFrame(i, species, cause, detail);
    rules.inDeployFrame = frame.mode === FrameMode.Default;
    const outcome = await runner.run(i);
    if (rules.violation !== undefined) fail(rules.violation);
    if (outcome.result.status !== 1) fail(outcome.cause ?? 'failed', outcome.detail);

    if (frame.mode === FrameMode.Default) {
      // EIP-8141: the deploy frame must itself install non-empty code at the sender.
      const installed = state.writtenCode().includes(tx.sender) ? await state.getCode(senderAddress) : new Uint8Array(0);
      if (installed.length === 0) {
        fail(
          'no code at the sender after deploy',
          rules.senderHasCode ? 'the deploy frame installed none; the code there was already' : undefined,
        );
      }
      if (state.writtenCode().some((address) => address !== tx.sender)) fail('state change outside the sender');
      runner.approvals.senderCreated();
      rules.senderHasCode = true;
      continue;
    }
    // The expiry frame approves nothing: its verifier only reverts past the deadline.
    if (isExpiryFrame(i, frame)) continue;
    const required = BigInt(frame.flags & 3);
    const { granted, approveRefused } = runner.ctx;
    if (granted.length === 0) fail('no APPROVE', approveRefused);
    if (granted.length !== 1 || granted[0] !== required) {
      fail('wrong APPROVE scope', `granted ${granted.join(', ')}, the frame calls for exactly ${required}`);
    }
  }
  // Each frame approved what its flags call for, so the payer is set; checked all the same: a
  // prefix that ends without one is a transaction the chain would skip.
  if (runner.approvals.payer === undefined) refuseFrame(facts.prefixEnd, 'VERIFY', 'no payment approved');
}
