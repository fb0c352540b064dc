/**
 * Admission against head state (spec 4.4; frame-transactions.md section 6, "cheap state
 * reads"): nonce bounds, in-flight caps, fee cap versus base fee, expiry, funded payer. The
 * account need not exist, but its address must already be funded at head.
 */
import type { Submission } from '../submission/decode.js';
import { FrameMode } from '../../../protocol/index.js';
import type { InFlightEntry } from '../ledger/in-flight.js';
import type { Ledger } from '../ledger/ledger.js';
import { type SlotTurns, WAITING_HEADS } from '../ledger/paymaster-turns.js';
import { InFlightRefusal, refuse } from '../errors.js';
import type { Head, HeadState } from './state.js';

export interface AdmissionLimits {
  /** Spec 8: a nonce more than this far ahead of the state nonce is refused. */
  readonly nonceGapMax: bigint;
  readonly inFlightCap: number;
  /** Frame transactions: upstream pool policy keeps one pending per sender. */
  readonly frameInFlightCap: number;
  /** A nonce ahead of the state nonce only over every nonce between in flight (the chain runs in arrival order). */
  readonly contiguousNonces: boolean;
  /** Heads after which a transaction in flight and not executed counts as skipped (its slot is free). */
  readonly skipAfterBlocks: bigint;
}

/** EIP-8141 "Mempool": pending transactions one non-canonical paymaster may pay for. */
export const MAX_PENDING_TXS_USING_NON_CANONICAL_PAYMASTER = 1;

/**
 * A frame transaction's expiry deadline (its expiry frame) is reached at `head`: every block after
 * the head has a later timestamp, so a deadline at the head's own can never be met.
 */
export function deadlineReached(sub: Submission, head: Head): boolean {
  const deadline = sub.frame?.facts.deadline;
  return deadline !== undefined && deadline <= head.timestamp;
}

/**
 * What a transaction in flight may take from its payer: its maximum cost, and, paid by its own
 * sender, the value its SENDER frames send (only SENDER frames carry value). Reserved with it, a
 * code-less sponsor cannot send its funds away in a transaction of its own while it sponsors
 * others (they would all be skipped, unpaid), nor sponsor more than what such a transaction
 * leaves. A standard transaction's maximum cost has its value already.
 */
function exposureOf(sub: Submission): bigint {
  return sub.payer === sub.sender ? sub.maxCost + sentValue(sub) : sub.maxCost;
}

/** The value a frame transaction's SENDER frames send from its sender. */
const sentValue = (sub: Submission): bigint =>
  sub.frame === undefined
    ? 0n
    : sub.frame.tx.frames.reduce((sum, frame) => (frame.mode === FrameMode.Sender ? sum + frame.value : sum), 0n);

/**
 * A sponsor's funds leave it in a transaction another payer pays for, uncounted by its own
 * reservations (exposureOf counts a sender's value only against itself as payer): the two may not
 * be pending together. A transaction sending its sender's value, paid by another, waits while the
 * sender pays for transactions pending; one the sender pays for waits while a transaction of the
 * sender's own, paid by another, is pending (whether it sends value is not kept: any counts).
 */
async function refuseSponsorDrain(sub: Submission, payerNonce: bigint, head: Head, ledger: Ledger): Promise<void> {
  if (sentValue(sub) > 0n && (await ledger.reserved(sub.sender, head.number)) > 0n) {
    throw new InFlightRefusal(
      'sponsor-pending',
      `the sender ${sub.sender} pays for transactions pending: one sending its value and paid by another waits until they are included (what it sends would leave them unpaid)`,
    );
  }
  const own = await ledger.pending(sub.payer, payerNonce, head.number);
  if (own.some((entry) => entry.payer !== sub.payer)) {
    throw new InFlightRefusal(
      'sponsor-pending',
      `the payer ${sub.payer} has a transaction of its own pending that another pays for (it may send the payer's funds away): retry once it is included`,
    );
  }
}

/**
 * A pending EIP-7702 authorization gives its account code before what is judged now runs, so it
 * counts as code (issue 36): a frame transaction's sender with one pending waits for it (geth's
 * frame pool refuses the same), and a sponsor with one pending is held to a paymaster with code's
 * one slot (in `checkAdmission`). The reverse: an authorization may not delegate an account that
 * pays for others' transactions pending, judged as a code-less sponsor's would be (its delegated
 * code need not approve them: all would be skipped, unpaid).
 */
async function refuseDelegationConflicts(sub: Submission, head: Head, ledger: Ledger): Promise<void> {
  if (sub.frame !== undefined && (await ledger.delegating(sub.sender, head.number))) {
    throw new InFlightRefusal(
      'authorization-pending',
      `the sender ${sub.sender} has an EIP-7702 authorization pending, which gives it code: its frame transaction waits until that is included (EIP-8141 mempool rules)`,
    );
  }
  for (const authority of sub.authorities ?? []) {
    if (await ledger.sponsoring(authority, head.number)) {
      throw new InFlightRefusal(
        'sponsor-pending',
        `an authorization delegates ${authority}, which pays for others' transactions pending: code would change how it approves them; retry once they are included`,
      );
    }
  }
}

/**
 * EIP-8141's mempool keeps one pending transaction per frame transaction sender, whose nonce
 * must be the state nonce: a wallet sending its next one too soon is told which one it waits
 * for, and until when (not cached: the answer changes with the head).
 */
function refuseWhilePending(waiting: InFlightEntry, stateNonce: bigint, skipAfterBlocks: bigint): never {
  const lastBlock = waiting.head + skipAfterBlocks;
  throw new InFlightRefusal(
    'sender-pending',
    `a transaction of this sender is pending (${waiting.hash}, nonce ${waiting.nonce}) and a frame transaction's nonce must be the sender's next nonce ${stateNonce}: one pending transaction per sender (EIP-8141 mempool rules); send this one once that one is included, or after block ${lastBlock} if it is not`,
    { pending: waiting.hash, until_block: `0x${lastBlock.toString(16)}` },
  );
}

/** Gives the in-flight slot back (the EL or the submission target refused after all). */
export type Release = () => Promise<void>;

/**
 * Admits a submission, holding an in-flight slot for it, or throws a Refusal (or Unavailable).
 * The slot is taken atomically with the nonce and cap checks (in the ledger), so concurrent
 * submissions, on this instance or another, never both take the last slot or the same nonce.
 */
export async function checkAdmission(
  sub: Submission,
  head: Head,
  state: HeadState,
  ledger: Ledger,
  limits: AdmissionLimits,
  /** Whose submission it is, and the turns at paymasters' slots it takes its place in. */
  turns?: { readonly source: string; readonly paymasters: SlotTurns },
): Promise<Release> {
  const sender = await state.account(sub.sender, head);
  if (sub.nonce < sender.nonce) refuse('nonce-too-low', `nonce too low: the sender's next nonce is ${sender.nonce}`);
  if (sub.frame !== undefined && sub.nonce !== sender.nonce) {
    const [waiting] = await ledger.pending(sub.sender, sender.nonce, head.number);
    if (waiting !== undefined) refuseWhilePending(waiting, sender.nonce, limits.skipAfterBlocks);
    refuse('nonce-mismatch', `a frame transaction's nonce must be the sender's next nonce ${sender.nonce}`);
  }
  if (sub.nonce > sender.nonce + limits.nonceGapMax) {
    refuse(
      'nonce-gap',
      `nonce too high: nonce ${sub.nonce} is more than ${limits.nonceGapMax} ahead of the sender's state nonce ${sender.nonce}`,
    );
  }
  if (sub.maxFeePerGas < head.baseFee) {
    refuse(
      'fee-too-low',
      `max fee per gas less than block base fee: max fee per gas ${sub.maxFeePerGas} is below the current base fee ${head.baseFee}`,
    );
  }
  if (deadlineReached(sub, head)) {
    refuse(
      'expiry-invalid',
      `the transaction expires at ${sub.frame?.facts.deadline}, and the next block comes after the latest (${head.timestamp})`,
    );
  }

  await refuseDelegationConflicts(sub, head, ledger);
  const cap = sub.frame !== undefined ? limits.frameInFlightCap : limits.inFlightCap;
  const cost = exposureOf(sub);
  const entry: InFlightEntry = {
    hash: sub.hash,
    nonce: sub.nonce,
    payer: sub.payer,
    cost,
    head: head.number,
    ...(sub.authorities === undefined || sub.authorities.length === 0 ? {} : { authorities: sub.authorities }),
  };
  // EIP-8141's mempool: a paymaster with code pays for at most one pending transaction at a time
  // (no paymaster counts as canonical until its code is pinned); a code-less sponsor, only its
  // funds. An authorization pending for it counts as code.
  const payerCap =
    sub.frame !== undefined &&
    sub.payer !== sub.sender &&
    ((await state.codeEntry(sub.payer, head)).bytes.length > 0 || (await ledger.delegating(sub.payer, head.number)))
      ? MAX_PENDING_TXS_USING_NON_CANONICAL_PAYMASTER
      : undefined;
  if (payerCap !== undefined && turns !== undefined && (await turns.paymasters.yields(sub.payer, turns.source, head.number))) {
    throw new InFlightRefusal(
      'paymaster-pending',
      `the paymaster ${sub.payer}'s pending slot goes to another source waiting for it: this source held it last (EIP-8141 mempool rules: a sponsor with code takes one at a time); retry after block ${head.number + WAITING_HEADS}`,
    );
  }
  const reservation = await ledger.reserve({
    sender: sub.sender,
    entry,
    stateNonce: sender.nonce,
    cap,
    contiguous: limits.contiguousNonces,
    ...(payerCap === undefined ? {} : { payerCap }),
  });
  const refuseInFlight = (reason: string, detail: string): never => {
    throw new InFlightRefusal(reason, detail);
  };
  if (reservation === 'nonce-in-flight') {
    refuseInFlight('nonce-in-flight', `a transaction with nonce ${sub.nonce} from this sender is already in flight`);
  }
  if (reservation === 'cap') refuseInFlight('in-flight-cap', `too many in-flight transactions for the sender (cap ${cap})`);
  if (reservation === 'payer-cap') {
    await turns?.paymasters.waited(sub.payer, turns.source, head.number);
    refuseInFlight(
      'paymaster-pending',
      `the paymaster ${sub.payer} already pays for ${payerCap} pending transaction: a sponsor with code takes one at a time (EIP-8141 mempool rules); retry once it is included`,
    );
  }
  if (reservation === 'gap') {
    refuseInFlight(
      'nonce-not-contiguous',
      `nonce too high: nonce ${sub.nonce} is ahead of the sender's next nonce ${sender.nonce}, and not every nonce between is in flight (this chain runs transactions in arrival order: it would be skipped)`,
    );
  }
  const release: Release = () => ledger.release(sub.sender, sub.nonce, sub.hash);

  try {
    const payer = sub.payer === sub.sender ? sender : await state.account(sub.payer, head);
    if (sub.payer !== sub.sender) await refuseSponsorDrain(sub, payer.nonce, head, ledger);
    // What the payer's in-flight transactions may spend, this one included.
    const reserved = await ledger.reserved(sub.payer, head.number);
    if (payer.balance < reserved) {
      const others = reserved - cost;
      const value = cost - sub.maxCost;
      // frame-transactions.md section 6 names this `payer-balance`; the gate's own code for the rest.
      // With other transactions reserving, it rests on what is in flight too.
      (others > 0n ? refuseInFlight : refuse)(
        sub.frame !== undefined ? 'payer-balance' : 'insufficient-funds',
        `insufficient funds for gas * price + value: the payer ${sub.payer} cannot cover the maximum cost ${sub.maxCost} wei${value > 0n ? ` and the ${value} wei its frames send` : ''} (balance ${payer.balance}` +
          `${others > 0n ? `, ${others} reserved by its in-flight transactions` : ''})`,
      );
    }
  } catch (err) {
    await release();
    throw err;
  }
  // Held only once admitted here: a refusal for funds takes no turn.
  if (payerCap !== undefined) await turns?.paymasters.took(sub.payer, turns.source);
  return release;
}
