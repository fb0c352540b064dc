/**
 * Builds type 0x06 frame transactions for tests and benchmarks, field by field, with ethers'
 * RLP (frame-transactions.md section 3). Signing follows section 5: every signer signs the
 * signature hash, the payload with empty-msg signatures blanked.
 */
import { p256 } from '@noble/curves/nist.js';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { concat, encodeRlp, getBytes, hexlify, keccak256, SigningKey, toBeHex, Wallet, type RlpStructuredData } from 'ethers';

export interface FrameFields {
  mode: number;
  flags: number;
  target?: string;
  executionGas: bigint;
  stateGas?: bigint;
  value?: bigint;
  data?: string;
}

export interface EntryFields {
  scheme: number;
  signer?: string;
  msg?: string;
  signature?: string;
}

export interface FrameTxFields {
  chainId?: bigint;
  nonce?: bigint;
  sender: string;
  frames: FrameFields[];
  signatures: EntryFields[];
  fees?: [bigint, bigint, bigint];
  blobHashes?: string[];
}

const int = (v: bigint | number) => (BigInt(v) === 0n ? '0x' : toBeHex(BigInt(v)));

function payload(tx: FrameTxFields, blankEmptyMsg: boolean): RlpStructuredData[] {
  const fees = tx.fees ?? [0n, 2_000_000_000n, 0n];
  return [
    int(tx.chainId ?? 8141n),
    int(tx.nonce ?? 0n),
    tx.sender,
    tx.frames.map((f) => [int(f.mode), int(f.flags), f.target ?? '0x', [int(f.executionGas), int(f.stateGas ?? 0n)], int(f.value ?? 0n), f.data ?? '0x']),
    tx.signatures.map((s) => [
      int(s.scheme),
      s.signer ?? '0x',
      s.msg ?? '0x',
      blankEmptyMsg && s.msg === undefined ? '0x' : (s.signature ?? '0x'),
    ]),
    fees.map(int),
    tx.blobHashes ?? [],
  ];
}

export function encodeFrameTx(tx: FrameTxFields): string {
  return concat(['0x06', encodeRlp(payload(tx, false))]);
}

export function frameSigHash(tx: FrameTxFields): string {
  return keccak256(concat(['0x06', encodeRlp(payload(tx, true))]));
}

export function secp256k1Entry(key: string, digest: string): string {
  const sig = new SigningKey(key).sign(digest);
  return concat([new Uint8Array([sig.yParity]), sig.r, sig.s]);
}

export function mldsaKeys(seed: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array; address: string } {
  const { publicKey, secretKey } = ml_dsa65.keygen(seed);
  return { publicKey, secretKey, address: '0x' + keccak256(publicKey).slice(26) };
}

/** `public_key ‖ signature`, signed deterministically (no extra entropy). */
export function mldsaEntry(keys: { publicKey: Uint8Array; secretKey: Uint8Array }, digest: string): string {
  const signature = ml_dsa65.sign(getBytes(digest), keys.secretKey, { extraEntropy: false });
  return hexlify(concat([keys.publicKey, signature]));
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

/** A fresh code-less SECP256K1 account. */
export function secpAccount() {
  const wallet = Wallet.createRandom();
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
  const keys = Array.from({ length: 14 }, () => {
    const secret = p256.utils.randomSecretKey();
    const point = p256.getPublicKey(secret, false).subarray(1);
    return { secret, point, address: '0x' + keccak256(point).slice(26) };
  });
  return Array.from({ length: count }, (_, i) => {
    const fields: FrameTxFields = {
      sender: '0x' + (0xa77ac0000 + i).toString(16).padStart(40, '0'),
      frames: [{ mode: 1, flags: 3, executionGas: 6_000n }, { mode: 2, flags: 0, target: RECIPIENT, executionGas: 21_000n }],
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
