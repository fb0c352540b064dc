/**
 * Static validity of a decoded frame transaction (frame-transactions.md section 6, items 2 to 6
 * and 8) and its gas figures (section 9): what makes it invalid in any block. No state access,
 * no cryptography: those come later, in that order, because `sender` is attacker-chosen. What a
 * public mempool asks beyond validity (item 7's prefix shapes, the budgets) is mempool/policy.ts.
 */
import { bytesOfHex } from './hex.js';
import { FrameMode, type Frame, type FrameTransaction, type SignatureEntry } from './frame-codec.js';
import { refuse } from './refusal.js';
import { SCHEMES } from './signatures.js';
import { CHAIN } from './chain.js';

/** Section 9 constants. */
const BASE_COST = 12_000n;
const PER_FRAME_COST = 475n;
const VALUE_TRANSFER_FRAME_COST = 6_000n;
const CALLDATA_TOKEN_COST = 4n;
const CALLDATA_FLOOR_PER_BYTE = 64n;
/** EIP-7825: the most gas a transaction may use (a frame transaction's intrinsic plus execution gas). */
export const TRANSACTION_EXECUTION_CAP = CHAIN.transactionGasCap;
/** Where the canonical expiry verifier lives, and the code EIP-8141 installs there (chain.ts). */
export const EXPIRY_VERIFIER = CHAIN.expiryVerifier;
export const EXPIRY_VERIFIER_CODE = CHAIN.expiryVerifierCode;
const U64_MAX = (1n << 64n) - 1n;
/** Frame flag bits (EIP-8141): the approvals a frame may grant, and the atomic-batch bit. */
export const APPROVE_PAYMENT = 1;
export const APPROVE_EXECUTION = 2;
export const APPROVE_BOTH = 3;
export const ATOMIC = 4;

/** What EIP-8141's static validity leaves known: the gas figures and the expiry frame, if any. */
export interface StaticFacts {
  readonly gas: FrameGas;
  readonly expiry: { readonly index: number; readonly deadline: bigint } | undefined;
}

/**
 * EIP-8141's static validity, and EIP-2681's nonce bound: what makes a frame transaction invalid
 * in any block, whatever the state. This chain carries no blobs. The devnet's executor applies
 * exactly this; the gate adds the public mempool's rules (mempool/policy.ts).
 */
export function checkStaticValidity(tx: FrameTransaction, chainId: bigint): StaticFacts {
  if (tx.chainId !== chainId) refuse('wrong-chain-id', `chain id ${tx.chainId} is not ${chainId}`);
  checkNonceBound(tx.nonce);
  if (tx.blobVersionedHashes.length > 0 || tx.maxFeePerBlobGas !== 0n) {
    refuse('blob-not-supported', 'frame transactions on this chain carry no blobs');
  }
  if (tx.maxPriorityFeePerGas > tx.maxFeePerGas) refuse('fee-order', 'max_priority_fee_per_gas exceeds max_fee_per_gas');
  checkFrames(tx);
  const expiry = checkExpiry(tx.frames);
  tx.signatures.forEach(checkEntryShape);
  const gas = frameGas(tx);
  if (gas.capped > TRANSACTION_EXECUTION_CAP) {
    refuse('gas-cap', `intrinsic plus execution gas ${gas.capped} exceeds ${TRANSACTION_EXECUTION_CAP}`);
  }
  return { gas, expiry };
}

/** EIP-2681: a nonce of 2^64 - 1 cannot be incremented, so no transaction of any type may carry it. */
export function checkNonceBound(nonce: bigint): void {
  if (nonce >= U64_MAX) refuse('nonce-max', `nonce has max value: ${nonce} cannot be incremented (EIP-2681)`);
}

/** Whether a frame aimed at `target` runs at the sender (no target names the sender). */
export const isSender = (tx: FrameTransaction, target: string | undefined) => target === undefined || target === tx.sender;

function checkFrames(tx: FrameTransaction): void {
  let gas = 0n;
  let inBatch = false;
  tx.frames.forEach((frame, i) => {
    const bad = (why: string) => refuse('frame-invalid', `frame ${i}: ${why}`);
    if (frame.mode > FrameMode.Sender) bad(`unknown mode ${frame.mode}`);
    if (frame.flags >= 8) bad('flags above bit 2 must be zero');
    if (frame.value !== 0n && frame.mode !== FrameMode.Sender) bad('only SENDER frames may carry value');
    if ((frame.flags & APPROVE_EXECUTION) !== 0 && !isSender(tx, frame.target)) {
      bad('a frame that may grant execution must target the sender');
    }
    const atomic = (frame.flags & ATOMIC) !== 0;
    if (atomic) {
      if (frame.mode === FrameMode.Verify) bad('a VERIFY frame cannot be atomic');
      if (i === tx.frames.length - 1) bad('the last frame cannot be atomic');
      if (tx.frames[i + 1]!.mode === FrameMode.Verify) bad('an atomic frame cannot precede a VERIFY frame');
    }
    // A batch is a run of atomic frames plus the frame that ends it; none may grant approval.
    if ((atomic || inBatch) && (frame.flags & APPROVE_BOTH) !== 0) bad('frames inside an atomic batch carry no approval bits');
    inBatch = atomic;
    gas += frame.executionGas + frame.stateGas;
    if (gas > U64_MAX) bad('total gas overflows 64 bits');
  });
}

function checkExpiry(frames: readonly Frame[]): StaticFacts['expiry'] {
  let expiry: StaticFacts['expiry'];
  frames.forEach((frame, i) => {
    if (frame.mode !== FrameMode.Verify || frame.target !== EXPIRY_VERIFIER) return;
    const bad = (why: string) => refuse('expiry-invalid', `frame ${i}: ${why}`);
    if (expiry !== undefined) bad('at most one expiry frame');
    if (frame.flags !== 0 || frame.value !== 0n || frame.stateGas !== 0n) bad('the expiry frame has flags, value and state gas 0');
    if (frame.data.length !== 8) bad('the expiry frame carries exactly 8 bytes of deadline');
    expiry = { index: i, deadline: Buffer.from(frame.data).readBigUInt64BE() };
  });
  return expiry;
}

function checkEntryShape(entry: SignatureEntry, i: number): void {
  const scheme = SCHEMES.get(entry.scheme);
  if (scheme === undefined) refuse('sig-scheme-unknown', `signature ${i}: unknown scheme 0x${entry.scheme.toString(16)}`);
  if (scheme.name === 'ARBITRARY' && entry.signer !== undefined) refuse('sig-invalid', `signature ${i}: ARBITRARY entries name no signer`);
  if (entry.msg !== undefined && (entry.msg.length !== 32 || entry.msg.every((b) => b === 0))) {
    refuse('sig-invalid', `signature ${i}: msg must be empty or a non-zero 32-byte digest`);
  }
  const length = entry.signature.length;
  if (scheme.signatureBytes !== undefined && length !== scheme.signatureBytes) {
    refuse(scheme.lengthReason, `signature ${i}: ${scheme.name} signatures are ${scheme.signatureBytes} bytes, not ${length}`);
  }
}

/** A frame transaction's gas as section 9 defines it, from its fields alone. */
export interface FrameGas {
  readonly intrinsic: bigint;
  readonly calldataFloor: bigint;
  readonly maxGas: bigint;
  /** Intrinsic plus execution gas, or the floor: what EIP-7825's cap applies to. */
  readonly capped: bigint;
}

/** Section 9: intrinsic gas, calldata floor, max gas. */
export function frameGas(tx: FrameTransaction): FrameGas {
  const frames = BigInt(tx.frames.length);
  // Numbers, not bigints, per byte: a 5 KB signature entry is 5,000 additions.
  let zeroBytes = 0;
  let nonZeroBytes = 0;
  const count = (data: Uint8Array | undefined) => {
    if (data === undefined) return;
    for (const b of data) {
      if (b === 0) zeroBytes++;
      else nonZeroBytes++;
    }
  };
  let schemeGas = 0n;
  for (const entry of tx.signatures) {
    count(entry.signer === undefined ? undefined : bytesOfHex(entry.signer));
    count(entry.msg);
    count(entry.signature);
    schemeGas += SCHEMES.get(entry.scheme)!.verificationGas;
  }
  let execution = 0n;
  let state = 0n;
  let valueCost = 0n;
  for (const frame of tx.frames) {
    count(frame.data);
    execution += frame.executionGas;
    state += frame.stateGas;
    if (frame.value > 0n && frame.target !== undefined && frame.target !== tx.sender) valueCost += VALUE_TRANSFER_FRAME_COST;
  }
  const bytes = BigInt(zeroBytes + nonZeroBytes);
  const tokens = BigInt(zeroBytes + 4 * nonZeroBytes);
  const fixed = BASE_COST + PER_FRAME_COST * frames + schemeGas + valueCost;
  const intrinsic = fixed + CALLDATA_TOKEN_COST * tokens;
  const floor = fixed + CALLDATA_FLOOR_PER_BYTE * bytes;
  const capped = intrinsic + execution > floor ? intrinsic + execution : floor;
  const maxGas = capped + state;
  return { intrinsic, calldataFloor: floor, capped, maxGas };
}
