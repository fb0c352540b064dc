/**
 * Type 0x06 frame transactions: the canonical decoder and the signature hash, written to
 * frame-transactions.md sections 3 and 5 on ethers' RLP and keccak primitives.
 *
 * Canonical encoding is enforced by re-encoding what was decoded and comparing bytes: any
 * non-minimal length prefix, long form below 56 bytes or wrapped single byte changes the bytes.
 * Integers are checked separately for leading zero bytes (zero is the empty string).
 */
import { concat, decodeRlp, encodeRlp, getBytes, hexlify, keccak256, type RlpStructuredData } from 'ethers';
import { refuse } from './refusal.js';

export const FRAME_TX_TYPE = 0x06;
export const MAX_FRAMES = 64;
const U64_MAX = (1n << 64n) - 1n;
const U256_MAX = (1n << 256n) - 1n;

export const enum FrameMode {
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
  readonly data: string;
}

export interface SignatureEntry {
  readonly scheme: number;
  /** Lower-case 0x address, or undefined for "the sender". */
  readonly signer: string | undefined;
  /** 32-byte digest as hex, or undefined for "the signature hash". */
  readonly msg: string | undefined;
  readonly signature: string;
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

type Item = RlpStructuredData;

/** Decodes `raw` (type byte included). Refuses with rlp-invalid, rlp-noncanonical or blob-not-supported. */
export function decodeFrameTransaction(raw: string): FrameTransaction {
  const bytes = getBytes(raw);
  if (bytes[0] !== FRAME_TX_TYPE) refuse('type-unsupported', 'not a frame transaction');
  const body = hexlify(bytes.subarray(1));
  let payload: Item;
  try {
    payload = decodeRlp(body);
  } catch {
    refuse('rlp-invalid', 'the payload is not valid RLP');
  }
  if (encodeRlp(payload) !== body) refuse('rlp-noncanonical', 'the payload is not canonically encoded');
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
  return { ...tx, hash: keccak256(bytes), sigHash: signatureHash(p) };
}

/** Section 5: blank `signature` in every entry whose `msg` is empty, then hash. */
function signatureHash(payload: readonly Item[]): string {
  const signatures = (payload[4] as Item[]).map((entry) => {
    const [scheme, signer, msg] = entry as Item[];
    return msg === '0x' ? [scheme!, signer!, msg, '0x'] : entry;
  });
  const modified = [...payload.slice(0, 4), signatures, ...payload.slice(5)];
  return keccak256(concat([new Uint8Array([FRAME_TX_TYPE]), encodeRlp(modified)]));
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
    data: string(data!, `frames[${index}].data`),
  };
}

function signatureEntry(item: Item, index: number): SignatureEntry {
  const [scheme, signer, msg, signature] = list(item, 4, `signatures[${index}]`);
  const digest = string(msg!, `signatures[${index}].msg`);
  return {
    scheme: Number(integer(scheme!, `signatures[${index}].scheme`, 255n)),
    signer: address(signer!, `signatures[${index}].signer`, true),
    msg: digest === '0x' ? undefined : digest,
    signature: string(signature!, `signatures[${index}].signature`),
  };
}

function anyList(item: Item, what: string): readonly Item[] {
  if (!Array.isArray(item)) refuse('rlp-invalid', `${what} must be a list`);
  return item;
}

function list(item: Item, arity: number, what: string): readonly Item[] {
  const items = anyList(item, what);
  if (items.length !== arity) refuse('rlp-invalid', `${what} must have ${arity} items, not ${items.length}`);
  return items;
}

function string(item: Item, what: string): string {
  if (typeof item !== 'string') refuse('rlp-invalid', `${what} must be a byte string`);
  return item;
}

function integer(item: Item, what: string, max: bigint): bigint {
  const hex = string(item, what);
  if (hex === '0x') return 0n;
  if (hex.startsWith('0x00')) refuse('rlp-noncanonical', `${what} has leading zero bytes`);
  const value = BigInt(hex);
  if (value > max) refuse('rlp-invalid', `${what} is out of range`);
  return value;
}

function address(item: Item, what: string, optional: boolean): string | undefined {
  const hex = string(item, what);
  if (optional && hex === '0x') return undefined;
  if (hex.length !== 42) refuse('rlp-invalid', `${what} must be ${optional ? 'empty or ' : ''}20 bytes`);
  return hex.toLowerCase();
}
