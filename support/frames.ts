/**
 * Builds type 0x06 frame transactions for tests and benchmarks on the client-side encoder the
 * examples use (examples/frame-transaction.ts). Signing follows frame-transactions.md section 5:
 * every signer signs the signature hash, the payload with empty-msg signatures blanked.
 */
import { p256 } from '@noble/curves/nist.js';
import { concat, getBytes, hexlify, keccak256, SigningKey } from 'ethers';
import {
  encodeFrameTx,
  frameSigHash,
  mldsaEntry,
  mldsaKeys,
  type EntryFields,
  type FrameFields,
  type FrameTxFields,
} from './frame-fields.js';
import { p256SecretFor, walletFor } from './keys.js';

export { encodeFrameTx, frameSigHash, mldsaEntry, mldsaKeys, type EntryFields, type FrameFields, type FrameTxFields };

export function secp256k1Entry(key: string, digest: string): string {
  const sig = new SigningKey(key).sign(digest);
  return concat([new Uint8Array([sig.yParity]), sig.r, sig.s]);
}

/** A signed transfer: [self VERIFY to the sender, SENDER frame sending `value` to `to`]. */
export function transferFrameTx(options: {
  sender: string;
  nonce?: bigint;
  to: string;
  value: bigint;
  scheme: number;
  sign: (digest: string) => string;
  verifyGas?: bigint;
}): { raw: string; fields: FrameTxFields } {
  const fields: FrameTxFields = {
    nonce: options.nonce ?? 0n,
    sender: options.sender,
    frames: [
      { mode: 1, flags: 3, executionGas: options.verifyGas ?? 50_000n },
      { mode: 2, flags: 0, target: options.to, executionGas: 50_000n, value: options.value },
    ],
    signatures: [{ scheme: options.scheme }],
    fees: [0n, 2_000_000_000n, 0n],
  };
  fields.signatures[0]!.signature = options.sign(frameSigHash(fields));
  return { raw: encodeFrameTx(fields), fields };
}

export const RECIPIENT = '0x000000000000000000000000000000000000dead';

let seedCounter = 0;
/** A fresh ML-DSA-65 account (distinct seed per call). */
export function mldsaAccount() {
  const seed = new Uint8Array(32).fill(0x40 + seedCounter++);
  const keys = mldsaKeys(seed);
  return { ...keys, sign: (digest: string) => mldsaEntry(keys, digest) };
}

let secpCounter = 0;
/** A fresh code-less SECP256K1 account (a distinct fixed key per call). */
export function secpAccount() {
  const wallet = walletFor(`secp account ${secpCounter++}`);
  return { address: wallet.address.toLowerCase(), sign: (digest: string) => secp256k1Entry(wallet.privateKey, digest) };
}

/** Signs every entry over the signature hash with the matching signer. */
export function signed(fields: FrameTxFields, signers: Array<(digest: string) => string>): string {
  const digest = frameSigHash(fields);
  fields.signatures.forEach((entry, i) => {
    entry.signature = signers[i]!(digest);
  });
  return encodeFrameTx(fields);
}

/** A transfer of 1 wei from a code-less account: [self VERIFY, SENDER to RECIPIENT]. */
export const selfTransfer = (sender: string, scheme: number, options: { verifyGas?: bigint; nonce?: bigint } = {}): FrameTxFields => ({
  nonce: options.nonce ?? 0n,
  sender,
  frames: [
    { mode: 1, flags: 3, executionGas: options.verifyGas ?? 10_000n },
    { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 1n },
  ],
  signatures: [{ scheme }],
  fees: [0n, 2_000_000_000n, 0n],
});

/**
 * `count` distinct frame transactions from code-less senders that do not exist, each with 14
 * valid P256 entries (explicit signers): the most verification one transaction may carry within
 * the prefix budget (93,800 gas). Refused for funds once every entry has been verified.
 */
export function p256HeavyFrames(count: number): string[] {
  const keys = Array.from({ length: 14 }, (_, j) => {
    const secret = p256SecretFor(`p256 heavy entry ${j}`);
    const point = p256.getPublicKey(secret, false).subarray(1);
    return { secret, point, address: `0x${keccak256(point).slice(26)}` };
  });
  return Array.from({ length: count }, (_, i) => {
    const fields: FrameTxFields = {
      sender: `0x${(0xa77ac0000 + i).toString(16).padStart(40, '0')}`,
      frames: [
        { mode: 1, flags: 3, executionGas: 6_000n },
        { mode: 2, flags: 0, target: RECIPIENT, executionGas: 21_000n },
      ],
      signatures: keys.map((k) => ({ scheme: 0x02, signer: k.address })),
      fees: [0n, 2_000_000_000n, 0n],
    };
    const digest = getBytes(frameSigHash(fields));
    fields.signatures.forEach((entry, j) => {
      const sig = p256.sign(digest, keys[j]!.secret, { prehash: false, lowS: true, format: 'compact' });
      entry.signature = hexlify(concat([sig, keys[j]!.point]));
    });
    return encodeFrameTx(fields);
  });
}
