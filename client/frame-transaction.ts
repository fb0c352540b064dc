/**
 * Frame transactions (type 0x6) as a wallet holds them: the chain's JSON field names, quantities
 * as bigint, byte strings as 0x hex; encoded, decoded and hashed by the chain's own codec
 * (protocol/), byte for byte as the gate and the chain read them.
 */
import { bytesToHex } from '@ethereumjs/util';
import {
  CHAIN,
  bytesOfHex,
  decodeFrameTransaction as decodeRaw,
  encodeFrameTransaction as encodeFields,
  type FrameTransactionFields,
  withHashes,
} from '../protocol/index.js';

export type Hex = `0x${string}`;
export type Address = `0x${string}`;

/** Chain 8141. */
export const CHAIN_ID = CHAIN.chainId;
/** Frame modes. */
export const FRAME_MODE = { default: 0, verify: 1, sender: 2 } as const;
/** A VERIFY frame's approval scopes (flags bits 0-1); bit 2 joins an atomic batch. */
export const FRAME_FLAGS = { approvePayment: 1, approveExecution: 2, approveBoth: 3, atomic: 4 } as const;
/** Signature schemes: ARBITRARY (checked by the account's code), SECP256K1, P256, and the chain's ML-DSA-65. */
export const SIGNATURE_SCHEME = { arbitrary: 0x00, secp256k1: 0x01, p256: 0x02, mldsa65: 0x65 } as const;

export interface Frame {
  readonly mode: number;
  /** 0 when absent. */
  readonly flags?: number;
  /** Absent: the sender. */
  readonly target?: Address;
  /** Absent: 0 when encoded; left to the node in an estimate. */
  readonly executionGas?: bigint;
  readonly stateGas?: bigint;
  readonly value?: bigint;
  readonly data?: Hex;
}

export interface SignatureEntry {
  readonly scheme: number;
  /** Absent: the sender. */
  readonly signer?: Address;
  /** A 32-byte digest; absent: the transaction's signature hash. */
  readonly msg?: Hex;
  /** Absent until signed (signFrameTransaction). */
  readonly signature?: Hex;
}

export interface FrameTransaction {
  /** 8141 when absent. */
  readonly chainId?: bigint;
  /** Absent: 0 when encoded; the sender's next in an estimate. */
  readonly nonce?: bigint;
  /** The sender. */
  readonly from: Address;
  readonly frames: readonly Frame[];
  readonly signatures?: readonly SignatureEntry[];
  readonly maxPriorityFeePerGas?: bigint;
  readonly maxFeePerGas?: bigint;
}

const hexOf = (bytes: Uint8Array): Hex => bytesToHex(bytes);
const lower = (address: string): Address => address.toLowerCase() as Address;

/** The codec's fields of `tx`, every absent limit and fee 0. */
export function fieldsOf(tx: FrameTransaction): FrameTransactionFields {
  return {
    chainId: tx.chainId ?? CHAIN_ID,
    nonce: tx.nonce ?? 0n,
    sender: lower(tx.from),
    frames: tx.frames.map((f) => ({
      mode: f.mode,
      flags: f.flags ?? 0,
      target: f.target === undefined ? undefined : lower(f.target),
      executionGas: f.executionGas ?? 0n,
      stateGas: f.stateGas ?? 0n,
      value: f.value ?? 0n,
      data: bytesOfHex(f.data ?? '0x'),
    })),
    signatures: (tx.signatures ?? []).map((e) => ({
      scheme: e.scheme,
      signer: e.signer === undefined ? undefined : lower(e.signer),
      msg: e.msg === undefined ? undefined : bytesOfHex(e.msg),
      signature: bytesOfHex(e.signature ?? '0x'),
    })),
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas ?? 0n,
    maxFeePerGas: tx.maxFeePerGas ?? 0n,
    maxFeePerBlobGas: 0n,
    blobVersionedHashes: [],
  };
}

/** The raw transaction (0x06 ‖ rlp(payload)), as eth_sendRawTransaction takes it. */
export function encodeFrameTransaction(tx: FrameTransaction): Hex {
  return hexOf(encodeFields(fieldsOf(tx)));
}

/** A raw frame transaction's fields; throws on bytes the chain would refuse to decode. */
export function decodeFrameTransaction(raw: Hex): Required<Omit<FrameTransaction, 'signatures'>> & { signatures: SignatureEntry[] } {
  const tx = decodeRaw(raw);
  return {
    chainId: tx.chainId,
    nonce: tx.nonce,
    from: tx.sender as Address,
    frames: tx.frames.map((f) => ({
      mode: f.mode,
      flags: f.flags,
      ...(f.target === undefined ? {} : { target: f.target as Address }),
      executionGas: f.executionGas,
      stateGas: f.stateGas,
      value: f.value,
      data: hexOf(f.data),
    })),
    signatures: tx.signatures.map((e) => ({
      scheme: e.scheme,
      ...(e.signer === undefined ? {} : { signer: e.signer as Address }),
      ...(e.msg === undefined ? {} : { msg: hexOf(e.msg) }),
      signature: hexOf(e.signature),
    })),
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
    maxFeePerGas: tx.maxFeePerGas,
  };
}

/** What every entry without `msg` signs: keccak-256 of the encoding with those entries' signatures blanked. */
export function frameSignatureHash(tx: FrameTransaction): Hex {
  return withHashes(fieldsOf(tx)).sigHash as Hex;
}

/** keccak-256 of the raw transaction: what eth_sendRawTransaction answers. */
export function frameTransactionHash(tx: FrameTransaction): Hex {
  return withHashes(fieldsOf(tx)).hash as Hex;
}
