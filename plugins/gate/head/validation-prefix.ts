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
 *   precompile): the embedded EVM simulates the prefix under the ERC-7562-style rules, in a
 *   worker thread (pool/simulation/simulate.ts).
 */
import type { Submission } from '../submission/decode.js';
import { codeHashOf, evaluateDirectly, EXPIRY_VERIFIER, EXPIRY_VERIFIER_CODE, type StateDependencies } from '../../../protocol/index.js';
import { frameRefusal, Refusal } from '../errors.js';
import type { Head, HeadState } from './state.js';

/** Runs the prefix in the embedded EVM: what it read; throws a `verify-rejected` Refusal (with its dependencies) on a rule violation. */
export type PrefixSimulator = (sub: Submission, head: Head) => Promise<StateDependencies>;

export interface PrefixJudge {
  readonly isPrecompile: (address: string) => boolean;
  readonly simulate: PrefixSimulator;
}

/** What the verdict read, when the prefix would set the payer; otherwise throws a Refusal (or Unavailable). */
export async function judgePrefix(sub: Submission, head: Head, state: HeadState, judge: PrefixJudge): Promise<StateDependencies> {
  const { tx, facts } = sub.frame!;
  if (facts.deadline !== undefined) await checkExpiryVerifier(state, head);
  const targets = new Set<string>();
  for (let i = 0; i <= facts.prefixEnd; i++) {
    const target = tx.frames[i]!.target ?? tx.sender;
    if (!(i === 0 && facts.deadline !== undefined && target === EXPIRY_VERIFIER)) targets.add(target);
  }
  const codes = await Promise.all([...targets].map((target) => state.code(target, head)));
  const direct = codes.every((code) => code === '0x') && ![...targets].some(judge.isPrecompile);
  if (!direct) return judge.simulate(sub, head);
  const sender = await state.account(tx.sender, head);
  const senderCode = targets.has(tx.sender) ? '0x' : await state.code(tx.sender, head);
  const senderExists = sender.nonce > 0n || sender.balance > 0n || senderCode !== '0x';
  const accounts = new Map([[tx.sender, sender]]);
  const balanceOf = async (address: string) => {
    const account = await state.account(address, head);
    accounts.set(address, account);
    return account.balance;
  };
  const dependencies = (): StateDependencies => ({
    accounts: [...accounts].map(([address, { nonce, balance }]) => [address, nonce.toString(), balance.toString()] as const),
    codes: [...new Set([...targets, tx.sender])].map((address) => [address, '0x'] as const),
    slots: [],
  });
  try {
    await evaluateDirectly({ tx, prefixEnd: facts.prefixEnd, maxCost: facts.maxCost, senderExists, balanceOf });
  } catch (err) {
    if (err instanceof Refusal) err.dependencies = dependencies();
    throw err;
  }
  return dependencies();
}

/**
 * The expiry frame is evaluated directly (its deadline compared by admission) only over the code
 * EIP-8141 installs at EXPIRY_VERIFIER; any other code there would be a VERIFY frame reading
 * TIMESTAMP, which the trace rules ban.
 */
async function checkExpiryVerifier(state: HeadState, head: Head): Promise<void> {
  const code = await state.codeEntry(EXPIRY_VERIFIER, head);
  if (code.hashHex === EXPIRY_VERIFIER_CODE_HASH) return;
  const refusal = frameRefusal(0, 'VERIFY', 'not the canonical expiry verifier', `the code at ${EXPIRY_VERIFIER} is not EIP-8141's`);
  refusal.dependencies = { accounts: [], codes: [[EXPIRY_VERIFIER, code.hashHex]], slots: [] };
  throw refusal;
}

const EXPIRY_VERIFIER_CODE_HASH = codeHashOf(EXPIRY_VERIFIER_CODE);
