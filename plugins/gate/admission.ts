/**
 * Admission against head state (spec 4.4; frame-transactions.md section 6, "cheap state
 * reads"): nonce bounds, in-flight caps, fee cap versus base fee, expiry, funded payer. The
 * account need not exist, but its address must already be funded at head.
 */
import type { Submission } from './decode.js';
import type { InFlight } from './in-flight.js';
import { refuse } from './refusal.js';
import type { Head, HeadState } from './state.js';

export interface AdmissionLimits {
  /** Spec 8: a nonce more than this far ahead of the state nonce is refused. */
  readonly nonceGapMax: bigint;
  readonly inFlightCap: number;
  /** Frame transactions: upstream pool policy keeps one pending per sender. */
  readonly frameInFlightCap: number;
}

/** Gives the in-flight slot back (the EL or the submission target refused after all). */
export type Release = () => void;

/**
 * Admits a submission or throws a Refusal (or Unavailable). An admitted submission holds its
 * in-flight slot from the moment its checks pass, in the same synchronous step, so two
 * concurrent submissions can never both take the last slot or the same nonce.
 */
export async function checkAdmission(
  sub: Submission,
  head: Head,
  state: HeadState,
  inFlight: InFlight,
  limits: AdmissionLimits,
): Promise<Release> {
  const sender = await state.account(sub.sender, head);
  const pending = inFlight.pending(sub.sender, sender.nonce, head.number);

  if (sub.nonce < sender.nonce) refuse('nonce-too-low', `nonce too low: the sender's next nonce is ${sender.nonce}`);
  if (sub.frame !== undefined && sub.nonce !== sender.nonce) {
    refuse('nonce-mismatch', `a frame transaction's nonce must be the sender's next nonce ${sender.nonce}`);
  }
  if (sub.nonce > sender.nonce + limits.nonceGapMax) {
    refuse(
      'nonce-gap',
      `nonce gap too large: nonce ${sub.nonce} is more than ${limits.nonceGapMax} ahead of the sender's state nonce ${sender.nonce}`,
    );
  }
  if (pending.has(sub.nonce)) refuse('nonce-in-flight', `a transaction with nonce ${sub.nonce} from this sender is already in flight`);
  const cap = sub.frame !== undefined ? limits.frameInFlightCap : limits.inFlightCap;
  if (pending.size >= cap) refuse('in-flight-cap', `too many in-flight transactions for the sender (cap ${cap})`);
  if (sub.maxFeePerGas < head.baseFee) {
    refuse('fee-too-low', `max fee per gas ${sub.maxFeePerGas} is below the current base fee ${head.baseFee}`);
  }
  const deadline = sub.frame?.facts.deadline;
  if (deadline !== undefined && deadline < head.timestamp) {
    refuse('expiry-invalid', `the transaction expired at ${deadline}, before the latest block (${head.timestamp})`);
  }
  const payer = sub.payer === sub.sender ? sender : await state.account(sub.payer, head);
  const reserved = inFlight.reserved(sub.payer);
  if (payer.balance < sub.maxCost + reserved) {
    refuse(
      'insufficient-funds',
      `the payer ${sub.payer} cannot cover the maximum cost ${sub.maxCost} wei (balance ${payer.balance}` +
        `${reserved > 0n ? `, ${reserved} reserved by its in-flight transactions` : ''})`,
    );
  }
  inFlight.add(sub.sender, { hash: sub.hash, nonce: sub.nonce, payer: sub.payer, cost: sub.maxCost, head: head.number });
  return () => inFlight.release(sub.sender, sub.nonce, sub.hash);
}
