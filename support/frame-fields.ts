/**
 * Frame transactions (type 0x06) for the test suites: the fields, the signature hash and the
 * encoding (EIP-8141 as chain 8141 pins it) written apart from the chain's codec, on ethers'
 * RLP, so that the codec (protocol/, svc-ingress/client) has a second implementation to be
 * compared with; and ML-DSA-65 keys on @noble/post-quantum. `ox` (TxEnvelopeEip8141) encodes
 * and hashes the same for schemes 0-2 but refuses the chain's ML-DSA-65 scheme (0x65).
 */
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { concat, encodeRlp, getBytes, hexlify, keccak256, toBeHex, type RlpStructuredData } from 'ethers';
import { CHAIN } from '../protocol/index.js';

export const MODE = { default: 0, verify: 1, sender: 2 } as const;
/** Approval scopes a VERIFY frame allows (flags bits 0-1); bit 2 joins an atomic batch. */
export const FLAGS = { approvePayment: 1, approveExecution: 2, approveBoth: 3, atomic: 4 } as const;
export const SCHEME = { arbitrary: 0x00, secp256k1: 0x01, p256: 0x02, mldsa65: 0x65 } as const;
/** State gas for creating an account: EIP-8037's 120 bytes × 1,530 per byte. */
export const NEW_ACCOUNT_STATE_GAS = 183_600n;

export interface FrameFields {
  mode: number;
  flags: number;
  /** Absent: the sender. */
  target?: string;
  executionGas: bigint;
  stateGas?: bigint;
  value?: bigint;
  data?: string;
}

export interface EntryFields {
  scheme: number;
  /** Absent: the sender. */
  signer?: string;
  /** Absent: the signature hash. */
  msg?: string;
  signature?: string;
}

export interface FrameTxFields {
  chainId?: bigint;
  nonce?: bigint;
  sender: string;
  frames: FrameFields[];
  signatures: EntryFields[];
  /** [max priority fee, max fee, max blob fee] per gas. */
  fees?: [bigint, bigint, bigint];
  blobHashes?: string[];
}

const int = (v: bigint | number) => (BigInt(v) === 0n ? '0x' : toBeHex(BigInt(v)));

/** `[chain_id, nonce, sender, frames, signatures, fees, blob_versioned_hashes]`. */
function payload(tx: FrameTxFields, blankEmptyMsg: boolean): RlpStructuredData[] {
  const fees = tx.fees ?? [0n, 2_000_000_000n, 0n];
  return [
    int(tx.chainId ?? CHAIN.chainId),
    int(tx.nonce ?? 0n),
    tx.sender,
    tx.frames.map((f) => [
      int(f.mode),
      int(f.flags),
      f.target ?? '0x',
      [int(f.executionGas), int(f.stateGas ?? 0n)],
      int(f.value ?? 0n),
      f.data ?? '0x',
    ]),
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

/** The raw transaction, as eth_sendRawTransaction takes it. */
export function encodeFrameTx(tx: FrameTxFields): string {
  return concat(['0x06', encodeRlp(payload(tx, false))]);
}

/** What every entry with an empty `msg` signs: the encoding with those entries' signatures blanked. */
export function frameSigHash(tx: FrameTxFields): string {
  return keccak256(concat(['0x06', encodeRlp(payload(tx, true))]));
}

export interface MldsaKeys {
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
  /** keccak256(public key)[12:], lower case. */
  readonly address: string;
}

/** An ML-DSA-65 key pair from a 32-byte seed, and its account address. */
export function mldsaKeys(seed: Uint8Array): MldsaKeys {
  const { publicKey, secretKey } = ml_dsa65.keygen(seed);
  return { publicKey, secretKey, address: `0x${keccak256(publicKey).slice(26)}` };
}

/** An MLDSA65 entry's signature field: `public_key ‖ signature`, signed deterministically. */
export function mldsaEntry(keys: Pick<MldsaKeys, 'publicKey' | 'secretKey'>, digest: string): string {
  const signature = ml_dsa65.sign(getBytes(digest), keys.secretKey, { extraEntropy: false });
  return hexlify(concat([keys.publicKey, signature]));
}
