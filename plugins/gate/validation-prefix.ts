/**
 * Judges a frame transaction's validation prefix against head state (spec 4.4.1,
 * frame-transactions.md sections 7 and 8): the frames up to and including the one that grants
 * payment must succeed with exactly the APPROVE their flags call for, or the EL would find the
 * transaction invalid and drop it after consensus ordered it.
 *
 * Two paths, chosen by the code at each prefix frame's target:
 * - every target code-less (default code) or the expiry verifier: direct evaluation, no EVM
 *   (direct-evaluation.ts). This is an ordinary EOA-like or ML-DSA account, most of the traffic;
 * - otherwise (a smart account, a contract sponsor, a deploy frame, an EIP-7702 delegation, a
 *   precompile): the embedded EVM simulates the prefix under the ERC-7562-style rules.
 */
import type { Submission } from './decode.js';
import { evaluateDirectly } from './direct-evaluation.js';
import { refuse } from './refusal.js';
import type { Head, HeadState } from './state.js';

const EXPIRY_VERIFIER = '0x0000000000000000000000000000000000008141';

/** Runs the prefix in the embedded EVM; throws a `verify-rejected` Refusal on a rule violation. */
export type PrefixSimulator = (sub: Submission, head: Head) => Promise<void>;

export interface PrefixJudge {
  readonly isPrecompile: (address: string) => boolean;
  /** Absent while the ingress runs without an EVM: prefixes that need one are refused. */
  readonly simulate?: PrefixSimulator;
}

/** Throws a Refusal (or Unavailable) unless the prefix would set the payer. */
export async function judgePrefix(sub: Submission, head: Head, state: HeadState, judge: PrefixJudge): Promise<void> {
  const { tx, facts } = sub.frame!;
  const targets = new Set<string>();
  for (let i = 0; i <= facts.prefixEnd; i++) {
    const target = tx.frames[i]!.target ?? tx.sender;
    if (!(i === 0 && facts.deadline !== undefined && target === EXPIRY_VERIFIER)) targets.add(target);
  }
  const codes = await Promise.all([...targets].map((target) => state.code(target, head)));
  const direct = codes.every((code) => code === '0x') && ![...targets].some(judge.isPrecompile);
  if (direct) {
    const sender = await state.account(tx.sender, head);
    const senderCode = targets.has(tx.sender) ? '0x' : await state.code(tx.sender, head);
    const senderExists = sender.nonce > 0n || sender.balance > 0n || senderCode !== '0x';
    evaluateDirectly({ tx, prefixEnd: facts.prefixEnd, senderExists, coinbase: head.coinbase });
    return;
  }
  if (judge.simulate === undefined) {
    refuse('verify-unavailable', 'the validation prefix runs account code, and this ingress has no EVM to simulate it');
  }
  await judge.simulate(sub, head);
}
