/**
 * Signers for a frame transaction's entries: ML-DSA-65 (the chain's scheme 0x65: the entry
 * carries `public_key ‖ signature`, FIPS 204 pure ML-DSA over the 32-byte digest, empty context)
 * and SECP256K1 (`y_parity ‖ r ‖ s`, low s). Each knows its account's address.
 */
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { computeAddress, getBytes, hexlify, keccak256, SigningKey } from 'ethers';
import { type Address, frameSignatureHash, type FrameTransaction, type Hex, SIGNATURE_SCHEME } from './frame-transaction.js';

export interface FrameSigner {
  /** The account the signature resolves to (lower case). */
  readonly address: Address;
  readonly scheme: number;
  /** The entry's `signature` field for a 32-byte digest. */
  sign(digest: Hex): Hex;
}

/** An ML-DSA-65 key from a 32-byte seed; its address is keccak-256(public key)[12:]. Deterministic signatures. */
export function mldsa65Signer(seed: Uint8Array | Hex): FrameSigner & { readonly publicKey: Uint8Array } {
  const { publicKey, secretKey } = ml_dsa65.keygen(typeof seed === 'string' ? getBytes(seed) : seed);
  return {
    address: `0x${keccak256(publicKey).slice(26)}` as Address,
    scheme: SIGNATURE_SCHEME.mldsa65,
    publicKey,
    sign: (digest) => {
      const signature = ml_dsa65.sign(getBytes(digest), secretKey, { extraEntropy: false });
      const entry = new Uint8Array(publicKey.length + signature.length);
      entry.set(publicKey);
      entry.set(signature, publicKey.length);
      return hexlify(entry) as Hex;
    },
  };
}

/** A secp256k1 key (0x private key): the entry is y_parity ‖ r ‖ s, s low. */
export function secp256k1Signer(privateKey: Hex): FrameSigner {
  const key = new SigningKey(privateKey);
  return {
    address: computeAddress(key.publicKey).toLowerCase() as Address,
    scheme: SIGNATURE_SCHEME.secp256k1,
    sign: (digest) => {
      const { r, s, yParity } = key.sign(digest);
      return `0x0${yParity}${r.slice(2)}${s.slice(2)}` as Hex;
    },
  };
}

/**
 * `tx` with every entry that has no signature signed by the signer of its scheme and resolved
 * signer (`signer`, else the sender): entries with their own `msg` first (their signatures are
 * part of what the others sign), then those over the signature hash. ARBITRARY entries are the
 * account code's business and are left as they are. Throws if an entry has no signer.
 */
export function signFrameTransaction(tx: FrameTransaction, signers: readonly FrameSigner[]): FrameTransaction {
  const entries = [...(tx.signatures ?? [])];
  const signerOf = (i: number) => {
    const entry = entries[i]!;
    const resolved = (entry.signer ?? tx.from).toLowerCase();
    const signer = signers.find((s) => s.scheme === entry.scheme && s.address.toLowerCase() === resolved);
    if (signer === undefined) throw new Error(`signatures[${i}]: no signer for scheme 0x${entry.scheme.toString(16)} and ${resolved}`);
    return signer;
  };
  const unsigned = (i: number) => entries[i]!.signature === undefined && entries[i]!.scheme !== SIGNATURE_SCHEME.arbitrary;
  entries.forEach((entry, i) => {
    if (unsigned(i) && entry.msg !== undefined) entries[i] = { ...entry, signature: signerOf(i).sign(entry.msg) };
  });
  const digest = frameSignatureHash({ ...tx, signatures: entries });
  entries.forEach((entry, i) => {
    if (unsigned(i)) entries[i] = { ...entry, signature: signerOf(i).sign(digest) };
  });
  return { ...tx, signatures: entries };
}
