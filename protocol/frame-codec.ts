/**
 * Type 0x06 frame transactions: the canonical decoder and the signature hash, written to
 * frame-transactions.md sections 3 and 5, on @ethereumjs/rlp and keccak-256 straight from bytes.
 *
 * Canonical encoding is enforced, integers included (rlp-fields.ts).
 */
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { bytesOfHex, keccakHex } from './hex.js';
import { refuse } from './refusal.js';
import {
  address,
  anyList,
  bytes as byteString,
  decodeCanonical,
  encodeRlp,
  integer,
  list,
  string,
  U256_MAX,
  U64_MAX,
  type Item,
} from './rlp-fields.js';

export const FRAME_TX_TYPE = 0x06;
export const MAX_FRAMES = 64;

export enum FrameMode {
  Default = 0,
  Verify = 1,
  Sender = 2,
}

export interface Frame {
  readonly mode: number;
  readonly flags: number;
  /** Lower-case 0x address, or undefined for "the sender". */
  readonly target: string | undefined;
  readonly executionGas: bigint;
  readonly stateGas: bigint;
  readonly value: bigint;
  readonly data: Uint8Array;
}

export interface SignatureEntry {
  readonly scheme: number;
  /** Lower-case 0x address, or undefined for "the sender". */
  readonly signer: string | undefined;
  /** 32-byte digest, or undefined for "the signature hash". */
  readonly msg: Uint8Array | undefined;
  readonly signature: Uint8Array;
}

export interface FrameTransaction {
  readonly chainId: bigint;
  readonly nonce: bigint;
  readonly sender: string;
  readonly frames: readonly Frame[];
  readonly signatures: readonly SignatureEntry[];
  readonly maxPriorityFeePerGas: bigint;
  readonly maxFeePerGas: bigint;
  readonly maxFeePerBlobGas: bigint;
  readonly blobVersionedHashes: readonly string[];
  /** keccak256 of the raw bytes. */
  readonly hash: string;
  /** keccak256(0x06 ‖ rlp(payload with empty-msg signatures blanked)). */
  readonly sigHash: string;
}

/**
 * Decodes a raw transaction (type byte included): the gate's value, or 0x hex. Refuses with
 * rlp-invalid, rlp-noncanonical or blob-not-supported. Byte fields stay views of the raw bytes.
 */
export function decodeFrameTransaction(raw: string | { readonly bytes: Uint8Array; readonly hash: string }): FrameTransaction {
  const bytes = typeof raw === 'string' ? bytesOfHex(raw) : raw.bytes;
  if (bytes[0] !== FRAME_TX_TYPE) refuse('type-unsupported', 'not a frame transaction');
  const payload = decodeCanonical(bytes.subarray(1));
  if (Array.isArray(payload) && payload.length === 5 && Array.isArray(payload[0])) {
    refuse('blob-not-supported', 'blob network wrappers are not accepted');
  }
  const p = list(payload, 7, 'payload');
  const fees = list(p[5]!, 3, 'fees');
  const tx = {
    chainId: integer(p[0]!, 'chain_id', U256_MAX),
    nonce: integer(p[1]!, 'nonce', U64_MAX),
    sender: address(p[2]!, 'sender', false)!,
    frames: anyList(p[3]!, 'frames').map((f, i) => frame(f, i)),
    signatures: anyList(p[4]!, 'signatures').map((s, i) => signatureEntry(s, i)),
    maxPriorityFeePerGas: integer(fees[0]!, 'max_priority_fee_per_gas', U256_MAX),
    maxFeePerGas: integer(fees[1]!, 'max_fee_per_gas', U256_MAX),
    maxFeePerBlobGas: integer(fees[2]!, 'max_fee_per_blob_gas', U256_MAX),
    blobVersionedHashes: anyList(p[6]!, 'blob_versioned_hashes').map((h) => string(h, 'blob_versioned_hashes')),
  };
  if (tx.frames.length < 1 || tx.frames.length > MAX_FRAMES) {
    refuse('rlp-invalid', `a frame transaction carries 1 to ${MAX_FRAMES} frames, not ${tx.frames.length}`);
  }
  return { ...tx, hash: typeof raw === 'string' ? keccakHex(bytes) : raw.hash, sigHash: signatureHash(p) };
}

/** A frame transaction's fields, as `encodeFrameTransaction` takes them (its hashes are derived). */
export type FrameTransactionFields = Omit<FrameTransaction, 'hash' | 'sigHash'>;

/** The raw transaction (type byte included), canonical: what `decodeFrameTransaction` reads back. */
export function encodeFrameTransaction(tx: FrameTransactionFields): Uint8Array {
  return typed(encodeRlp(payloadOf(tx)));
}

/** `tx` with its transaction hash and signature hash, as decoding its encoding gives them. */
export function withHashes(tx: FrameTransactionFields): FrameTransaction {
  const payload = payloadOf(tx);
  return { ...tx, hash: keccakHex(typed(encodeRlp(payload))), sigHash: signatureHash(payload) };
}

/** An RLP integer: big-endian, no leading zeros (0 is the empty string). */
const quantity = (value: bigint | number): Uint8Array => bigIntToUnpaddedBytes(BigInt(value));
const optionalAddress = (address: string | undefined): Uint8Array => (address === undefined ? new Uint8Array(0) : bytesOfHex(address));

function payloadOf(tx: FrameTransactionFields): Item[] {
  return [
    quantity(tx.chainId),
    quantity(tx.nonce),
    bytesOfHex(tx.sender),
    tx.frames.map((f) => [
      quantity(f.mode),
      quantity(f.flags),
      optionalAddress(f.target),
      [quantity(f.executionGas), quantity(f.stateGas)],
      quantity(f.value),
      f.data,
    ]),
    tx.signatures.map((e) => [quantity(e.scheme), optionalAddress(e.signer), e.msg ?? new Uint8Array(0), e.signature]),
    [quantity(tx.maxPriorityFeePerGas), quantity(tx.maxFeePerGas), quantity(tx.maxFeePerBlobGas)],
    tx.blobVersionedHashes.map((h) => bytesOfHex(h)),
  ];
}

function typed(encoded: Uint8Array): Uint8Array {
  const message = new Uint8Array(1 + encoded.length);
  message[0] = FRAME_TX_TYPE;
  message.set(encoded, 1);
  return message;
}

/**
 * Section 5's preimage of a raw frame transaction: its encoding with `signature` blanked in
 * every entry whose `msg` is empty (what those entries sign; the devnet keeps it as the
 * signature-stripped record).
 */
export function blankedEncoding(raw: string): Uint8Array {
  return blanked(list(decodeCanonical(bytesOfHex(raw).subarray(1)), 7, 'payload'));
}

const signatureHash = (payload: readonly Item[]): string => keccakHex(blanked(payload));

function blanked(payload: readonly Item[]): Uint8Array {
  const signatures = (payload[4] as Item[]).map((entry) => {
    const [scheme, signer, msg] = entry as Item[];
    return (msg as Uint8Array).length === 0 ? [scheme!, signer!, msg!, new Uint8Array(0)] : entry;
  });
  return typed(encodeRlp([...payload.slice(0, 4), signatures, ...payload.slice(5)]));
}

function frame(item: Item, index: number): Frame {
  const [mode, flags, target, limits, value, data] = list(item, 6, `frames[${index}]`);
  const [executionGas, stateGas] = list(limits!, 2, `frames[${index}].limits`);
  return {
    mode: Number(integer(mode!, `frames[${index}].mode`, 255n)),
    flags: Number(integer(flags!, `frames[${index}].flags`, 255n)),
    target: address(target!, `frames[${index}].target`, true),
    executionGas: integer(executionGas!, `frames[${index}].limits[0]`, U64_MAX),
    stateGas: integer(stateGas!, `frames[${index}].limits[1]`, U64_MAX),
    value: integer(value!, `frames[${index}].value`, U256_MAX),
    data: byteString(data!, `frames[${index}].data`),
  };
}

function signatureEntry(item: Item, index: number): SignatureEntry {
  const [scheme, signer, msg, signature] = list(item, 4, `signatures[${index}]`);
  const digest = byteString(msg!, `signatures[${index}].msg`);
  return {
    scheme: Number(integer(scheme!, `signatures[${index}].scheme`, 255n)),
    signer: address(signer!, `signatures[${index}].signer`, true),
    msg: digest.length === 0 ? undefined : digest,
    signature: byteString(signature!, `signatures[${index}].signature`),
  };
}
