/**
 * Signature checks, once per submission, each with the fastest well-kept implementation:
 * secp256k1 recovery through native libsecp256k1 where it loads (~30x ethers' own; crypto-backend.ts),
 * P-256 through `@noble/curves`, ML-DSA-65 through `@noble/post-quantum` (FIPS 204 pure, empty
 * context, message = the 32-byte digest), as pinned in frame-transactions.md section 4.
 */
import { p256 } from '@noble/curves/nist.js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { recoverPublicKey } from './crypto-backend.js';
import { bytesOfHex, keccakHex } from './hex.js';
import type { FrameTransaction, SignatureEntry } from './frame-codec.js';
import { refuse } from './refusal.js';

export interface Scheme {
  readonly name: string;
  /** Exact `signature` length, when the scheme fixes one. */
  readonly signatureBytes: number | undefined;
  /** Reason code for a wrong length. */
  readonly lengthReason: string;
  /** Section 4 verification gas (ML-DSA-65's is this project's choice). */
  readonly verificationGas: bigint;
}

/** FIPS 204 ML-DSA-65 sizes; an entry carries the key, then the signature. */
export const ML_DSA65_PUBLIC_KEY_BYTES = 1952;
export const ML_DSA65_SIGNATURE_BYTES = 3309;

/** Section 4's scheme table; 0x44 and 0x87 (ML-DSA-44/-87) stay unknown until the chain enables them. */
export const SCHEMES: ReadonlyMap<number, Scheme> = new Map([
  [0x00, { name: 'ARBITRARY', signatureBytes: undefined, lengthReason: 'sig-invalid', verificationGas: 100n }],
  [0x01, { name: 'SECP256K1', signatureBytes: 65, lengthReason: 'sig-invalid', verificationGas: 2_800n }],
  [0x02, { name: 'P256', signatureBytes: 128, lengthReason: 'sig-invalid', verificationGas: 6_700n }],
  [
    0x65,
    {
      name: 'MLDSA65',
      signatureBytes: ML_DSA65_PUBLIC_KEY_BYTES + ML_DSA65_SIGNATURE_BYTES,
      lengthReason: 'mldsa-length',
      verificationGas: 9_000n,
    },
  ],
]);

export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** The address of an uncompressed secp256k1 public key (65 bytes, 0x04 prefix). */
function addressOfUncompressed(publicKey: Uint8Array): string {
  return `0x${keccakHex(publicKey.subarray(1)).slice(26)}`;
}

/**
 * Recovers the signer of a 32-byte digest from (r, s, yParity). Returns undefined for a
 * signature that recovers no key. Range and low-s rules are the caller's.
 */
export function recoverAddress(digest: Uint8Array, r: Uint8Array, s: Uint8Array, yParity: number): string | undefined {
  const signature = new Uint8Array(64);
  signature.set(r, 32 - r.length);
  signature.set(s, 64 - s.length);
  try {
    return addressOfUncompressed(recoverPublicKey(signature, yParity, digest));
  } catch {
    return undefined;
  }
}

const scalar = (bytes: Uint8Array) => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`));

/** What verifying a frame transaction's entries needs: the digest, the sender and the entries. */
export type SignedFrames = Pick<FrameTransaction, 'sender' | 'sigHash' | 'signatures'>;

/** Verifies every SECP256K1, P256 and MLDSA65 entry; the first failure refuses the transaction. */
export function verifyFrameSignatures(tx: SignedFrames): void {
  for (const [i, entry] of tx.signatures.entries()) verifyEntry(tx, entry, i);
}

function verifyEntry(tx: SignedFrames, entry: SignatureEntry, i: number): void {
  const signer = entry.signer ?? tx.sender;
  const digest = entry.msg ?? bytesOfHex(tx.sigHash);
  const sig = entry.signature;
  const bad = (why: string): never => refuse('sig-invalid', `signature ${i}: ${why}`);
  switch (entry.scheme) {
    case 0x01: {
      const [parity, r, s] = [sig[0]!, sig.subarray(1, 33), sig.subarray(33, 65)];
      if (parity > 1) bad('y_parity must be 0 or 1');
      if (!inRange(scalar(r), SECP256K1_N, false) || !inRange(scalar(s), SECP256K1_N, true)) bad('r or s out of range (s must be low)');
      if (recoverAddress(digest, r, s, parity) !== signer) bad('the SECP256K1 signature does not recover the signer');
      return;
    }
    case 0x02: {
      const [r, s, qx, qy] = [sig.subarray(0, 32), sig.subarray(32, 64), sig.subarray(64, 96), sig.subarray(96, 128)];
      if (!inRange(scalar(r), P256_N, false) || !inRange(scalar(s), P256_N, true)) bad('r or s out of range (s must be low)');
      if (`0x${keccakHex(sig.subarray(64, 128)).slice(26)}` !== signer) bad('the P256 key does not match the signer');
      const publicKey = new Uint8Array([4, ...qx, ...qy]);
      let valid = false;
      try {
        valid = p256.verify(sig.subarray(0, 64), digest, publicKey, { prehash: false, lowS: true });
      } catch {
        valid = false;
      }
      if (!valid) bad('the P256 signature does not verify');
      return;
    }
    case 0x65: {
      const publicKey = sig.subarray(0, ML_DSA65_PUBLIC_KEY_BYTES);
      if (`0x${keccakHex(publicKey).slice(26)}` !== signer) {
        refuse('mldsa-signer-mismatch', `signature ${i}: the ML-DSA-65 key's address is not the signer ${signer}`);
      }
      // No options object: a misspelt `context` must not silently change the message.
      if (!ml_dsa65.verify(sig.subarray(ML_DSA65_PUBLIC_KEY_BYTES), digest, publicKey)) {
        refuse('mldsa-verify-failed', `signature ${i}: the ML-DSA-65 signature does not verify`);
      }
      return;
    }
    default:
      // ARBITRARY: checked by the account's own VERIFY code during simulation.
      return;
  }
}

/** 0 < value < n, and value <= n/2 when `low` (no malleable high-s signatures). */
function inRange(value: bigint, n: bigint, low: boolean): boolean {
  return value > 0n && (low ? value <= n / 2n : value < n);
}
