/**
 * A frame transaction as a JSON-RPC request names it (ox's `TransactionRequest.Rpc` for type 0x6:
 * `from`, `frames`, `signatures`, fee fields; `sender` is read as `from`), for gas estimation:
 * each frame's `executionGas` and `stateGas` may be left out, the nonce and the fees too, and a
 * signature entry's `signature` too. What is left out is marked, and the transaction is
 * completed with stand-ins: limits of 0 (the estimator sets them), nonce 0 (the caller reads
 * the sender's), fees 0, and signatures of their scheme's full length in non-zero bytes, so
 * that the intrinsic gas and the calldata floor are what a real signature costs at most.
 */
import { FrameMode, type Frame, type FrameTransaction, type SignatureEntry, withHashes, MAX_FRAMES } from './frame-codec.js';
import { bytesOfHex } from './hex.js';
import { SCHEMES } from './signatures.js';

export class InvalidFrameRequest extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidFrameRequest';
  }
}

export interface FrameGasRequest {
  readonly tx: FrameTransaction;
  /** Per frame: which limits the request left to the estimator. */
  readonly unknown: readonly { readonly executionGas: boolean; readonly stateGas: boolean }[];
  /** Whether the request named the nonce (otherwise the sender's next, read by the caller). */
  readonly nonceGiven: boolean;
}

const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/;
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const U64_BITS = 64;
const U256_BITS = 256;

const bad = (why: string): never => {
  throw new InvalidFrameRequest(why);
};

function quantity(value: unknown, what: string, bits: number): bigint {
  if (typeof value !== 'string' || !QUANTITY.test(value)) bad(`${what} must be a hex quantity (0x…)`);
  const n = BigInt(value as string);
  if (n >> BigInt(bits) !== 0n) bad(`${what} is over ${bits} bits`);
  return n;
}

const optionalQuantity = (value: unknown, what: string, bits: number): bigint | undefined =>
  value === undefined || value === null ? undefined : quantity(value, what, bits);

function data(value: unknown, what: string): Uint8Array {
  if (value === undefined || value === null) return new Uint8Array(0);
  if (typeof value !== 'string' || !DATA.test(value)) bad(`${what} must be 0x-prefixed hex bytes`);
  return bytesOfHex(value as string);
}

/** An address, or undefined for "the sender" (absent, null or 0x). */
function optionalAddress(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null || value === '0x') return undefined;
  if (typeof value !== 'string' || !ADDRESS.test(value)) bad(`${what} must be a 20-byte address`);
  return (value as string).toLowerCase();
}

function object(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) bad(`${what} must be an object`);
  return value as Record<string, unknown>;
}

function frameOf(value: unknown, i: number): { frame: Frame; unknown: FrameGasRequest['unknown'][number] } {
  const f = object(value, `frames[${i}]`);
  const mode = Number(quantity(f.mode, `frames[${i}].mode`, 8));
  if (mode !== FrameMode.Default && mode !== FrameMode.Verify && mode !== FrameMode.Sender)
    bad(`frames[${i}].mode must be 0x0, 0x1 or 0x2`);
  const executionGas = optionalQuantity(f.executionGas, `frames[${i}].executionGas`, U64_BITS);
  const stateGas = optionalQuantity(f.stateGas, `frames[${i}].stateGas`, U64_BITS);
  return {
    frame: {
      mode,
      flags: Number(optionalQuantity(f.flags, `frames[${i}].flags`, 8) ?? 0n),
      target: optionalAddress(f.target, `frames[${i}].target`),
      executionGas: executionGas ?? 0n,
      stateGas: stateGas ?? 0n,
      value: optionalQuantity(f.value, `frames[${i}].value`, U256_BITS) ?? 0n,
      data: data(f.data ?? f.input, `frames[${i}].data`),
    },
    unknown: { executionGas: executionGas === undefined, stateGas: stateGas === undefined },
  };
}

function entryOf(value: unknown, i: number): SignatureEntry {
  const e = object(value, `signatures[${i}]`);
  const scheme = Number(quantity(e.scheme, `signatures[${i}].scheme`, 8));
  const known = SCHEMES.get(scheme);
  if (known === undefined) bad(`signatures[${i}].scheme 0x${scheme.toString(16)} is not a scheme of this chain`);
  const msg = data(e.msg, `signatures[${i}].msg`);
  const given = e.signature === undefined || e.signature === null ? undefined : data(e.signature, `signatures[${i}].signature`);
  return {
    scheme,
    signer: optionalAddress(e.signer, `signatures[${i}].signer`),
    msg: msg.length === 0 ? undefined : msg,
    signature: given ?? new Uint8Array(known!.signatureBytes ?? 0).fill(1),
  };
}

export function readFrameRequest(value: unknown, chainId: bigint): FrameGasRequest {
  const r = object(value, 'the transaction');
  if (r.type !== undefined && r.type !== null && !/^0x0?6$/.test(String(r.type))) bad('type must be 0x6 (a frame transaction)');
  const from = r.from ?? r.sender;
  if (typeof from !== 'string' || !ADDRESS.test(from)) bad('from (the sender) must be a 20-byte address');
  const chain = optionalQuantity(r.chainId, 'chainId', U256_BITS);
  if (chain !== undefined && chain !== chainId) bad(`chainId must be 0x${chainId.toString(16)}`);
  if (!Array.isArray(r.frames) || r.frames.length < 1 || r.frames.length > MAX_FRAMES)
    bad(`frames must be a list of 1 to ${MAX_FRAMES} frames`);
  const signatures = r.signatures ?? [];
  if (!Array.isArray(signatures)) bad('signatures must be a list');
  if ((optionalQuantity(r.maxFeePerBlobGas, 'maxFeePerBlobGas', U256_BITS) ?? 0n) !== 0n)
    bad('maxFeePerBlobGas must be 0: the chain carries no blobs');
  if (r.blobVersionedHashes !== undefined && (!Array.isArray(r.blobVersionedHashes) || r.blobVersionedHashes.length > 0))
    bad('blobVersionedHashes must be empty: the chain carries no blobs');
  const frames = (r.frames as unknown[]).map(frameOf);
  const nonce = optionalQuantity(r.nonce, 'nonce', U64_BITS);
  const tx = withHashes({
    chainId,
    nonce: nonce ?? 0n,
    sender: (from as string).toLowerCase(),
    frames: frames.map((f) => f.frame),
    signatures: (signatures as unknown[]).map(entryOf),
    maxPriorityFeePerGas: optionalQuantity(r.maxPriorityFeePerGas, 'maxPriorityFeePerGas', U256_BITS) ?? 0n,
    maxFeePerGas: optionalQuantity(r.maxFeePerGas, 'maxFeePerGas', U256_BITS) ?? 0n,
    maxFeePerBlobGas: 0n,
    blobVersionedHashes: [],
  });
  return { tx, unknown: frames.map((f) => f.unknown), nonceGiven: nonce !== undefined };
}

/** Whether an `eth_estimateGas` call object is a frame transaction (type 0x6, or frames named). */
export function isFrameRequest(call: unknown): boolean {
  if (call === null || typeof call !== 'object' || Array.isArray(call)) return false;
  const { type, frames } = call as Record<string, unknown>;
  return frames !== undefined || (typeof type === 'string' && /^0x0?6$/.test(type));
}
