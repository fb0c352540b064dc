/**
 * Decoding (frame-transactions.md section 2): dispatch on the first byte, decode once, recover
 * or verify signatures once, and hand admission a `Submission` with everything it needs.
 *
 * Standard types (legacy with EIP-155, 0x01, 0x02, 0x04) go through the standard decoder; their
 * sender is recovered with native libsecp256k1 (inline: ~70 µs), never with ethers' `.from`
 * (~500/s per core). Where only the pure-JS recovery runs (~1.7 ms, crypto-backend.ts) the judge
 * recovers it in the worker pool instead (`decodeUnrecovered`, then `withSender`).
 * Type 0x06 goes through the frame decoder and static checks; its signature entries are verified
 * afterwards, in the worker pool (pool/work-pool.ts), once the source has paid for them.
 */
import {
  checkFrameTransaction,
  checkStandardTransaction,
  decodeFrameTransaction,
  decodeStandardTransaction,
  FRAME_TX_TYPE,
  type FrameFacts,
  type FrameLimits,
  type FrameTransaction,
  recoverAddress,
} from '../../../protocol/index.js';
import { refuse } from '../errors.js';
import type { RawTransaction } from './raw-transaction.js';

export interface Submission {
  readonly raw: RawTransaction;
  /** keccak-256 of the raw bytes. */
  readonly hash: string;
  readonly type: number;
  readonly nonce: bigint;
  /** Lower-case 0x address. */
  readonly sender: string;
  /** Whose balance pays: the sender, or a frame transaction's sponsor. */
  readonly payer: string;
  readonly maxFeePerGas: bigint;
  /**
   * What the payer must hold: gas × fee cap, plus value for the standard types. A frame
   * transaction's payer is charged `max_cost` alone; value leaves the sender in SENDER frames,
   * which revert (not invalidate the transaction) when it cannot pay.
   */
  readonly maxCost: bigint;
  readonly frame?: { readonly tx: FrameTransaction; readonly facts: FrameFacts };
  /** Type 0x04: how many EIP-7702 authorizations it carries. */
  readonly authorizationCount: number;
  /**
   * Type 0x04: the accounts its authorizations delegate (their signers, for this chain), once the
   * judge has recovered them (judge.ts); until then, and for every other type, none.
   */
  readonly authorities?: readonly string[];
}

export interface DecodeLimits extends FrameLimits {
  readonly blockGasLimit: bigint;
}

export function decodeSubmission(raw: RawTransaction, limits: DecodeLimits): Submission {
  return decodeWith(raw, limits, (unrecovered) => {
    const { digest, r, s, yParity } = unrecovered.signature;
    return withSender(unrecovered, recoverAddress(digest, r, s, yParity));
  });
}

/**
 * `decodeSubmission`, but a standard transaction's sender recovered by `recover` (the worker
 * pool, where recovery runs in pure JS): the transaction is decoded and checked here first.
 */
export async function decodeSubmissionRecoveredBy(
  raw: RawTransaction,
  limits: DecodeLimits,
  recover: (task: RecoverTask) => Promise<string | undefined>,
): Promise<Submission> {
  return decodeWith(raw, limits, async (unrecovered) => withSender(unrecovered, await recover(unrecovered.signature)));
}

/** Dispatch on the type byte; a standard transaction, decoded and checked, is finished by `standard`. */
function decodeWith<T>(raw: RawTransaction, limits: DecodeLimits, standard: (unrecovered: Unrecovered) => T): Submission | T {
  const type = raw.bytes[0]!;
  if (type === 0x03)
    refuse('blob-not-supported', 'blob transactions (type 0x03) are not accepted: blob sidecars have no data-availability path');
  if (type === FRAME_TX_TYPE) return decodeFrame(raw, limits);
  return standard(decodeUnrecovered(raw, limits));
}

/** What recovers a standard transaction's sender: its signing digest and signature. */
export interface RecoverTask {
  readonly digest: Uint8Array;
  readonly r: Uint8Array;
  readonly s: Uint8Array;
  readonly yParity: number;
}

/** A standard transaction decoded and checked, its sender still to recover. */
export interface Unrecovered {
  readonly fields: Omit<Submission, 'sender' | 'payer' | 'maxCost'> & { readonly valueCost: bigint };
  readonly signature: RecoverTask;
}

/** Everything of a standard transaction but its sender (refuses what fails a check before). */
export function decodeUnrecovered(raw: RawTransaction, limits: DecodeLimits): Unrecovered {
  const tx = decodeStandardTransaction(raw.bytes);
  checkStandardTransaction(tx, limits);
  return {
    fields: {
      raw,
      hash: raw.hash,
      type: tx.type,
      nonce: tx.nonce,
      maxFeePerGas: tx.maxFeePerGas,
      valueCost: tx.gasLimit * tx.maxFeePerGas + tx.value,
      authorizationCount: tx.authorizationCount,
    },
    signature: { digest: tx.signingHash, r: tx.rBytes, s: tx.sBytes, yParity: tx.yParity },
  };
}

/** The submission, once its sender is recovered (refused if none can be). */
function withSender({ fields }: Unrecovered, sender: string | undefined): Submission {
  if (sender === undefined) refuse('sig-invalid', 'no sender can be recovered from the signature');
  const { valueCost, ...rest } = fields;
  return { ...rest, sender, payer: sender, maxCost: valueCost };
}

function decodeFrame(raw: RawTransaction, limits: DecodeLimits): Submission {
  const tx = decodeFrameTransaction(raw);
  const facts = checkFrameTransaction(tx, limits);
  // EIP-8141 "Block-level gas accounting": each dimension is reserved on its own.
  for (const [dimension, reservation] of [
    ['execution', facts.executionReservation],
    ['state', facts.stateReservation],
  ] as const) {
    if (reservation > limits.blockGasLimit) {
      refuse('gas-limit', `${dimension} gas ${reservation} exceeds the block gas limit ${limits.blockGasLimit}`);
    }
  }
  return {
    raw,
    hash: raw.hash,
    type: FRAME_TX_TYPE,
    nonce: tx.nonce,
    sender: tx.sender,
    payer: facts.payer,
    maxFeePerGas: tx.maxFeePerGas,
    maxCost: facts.maxCost,
    frame: { tx, facts },
    authorizationCount: 0,
  };
}
