/**
 * ECRECOVER (precompile 0x01) through the recovery the gate uses for transaction senders
 * (crypto-backend.ts: native libsecp256k1 where it loads), given to the EVM as its Common's
 * `customCrypto.ecrecover` (the package's documented hook). The package's default, @noble/curves
 * with its own checks, took ~2 ms a call here: a 100,000-gas loop of ECRECOVER cost ~21 P256
 * verifications' worth.
 *
 * Same contract as @ethereumjs/util's `ecrecover`: the 64-byte public key, or a throw (the
 * precompile then answers empty) for v other than 27 or 28, r or s zero or not below the group
 * order, or an r that is no curve point. High s is accepted (the precompile never refused it).
 */
import { recoverPublicKey } from '../crypto-backend.js';

/** The precompile hands over 32 bytes each of hash, r and s (its input right-padded to 128 bytes). */
export function ecrecoverPrecompile(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array): Uint8Array {
  if (v !== 27n && v !== 28n) throw new Error('invalid signature v value');
  const signature = new Uint8Array(64);
  signature.set(r, 0);
  signature.set(s, 32);
  return recoverPublicKey(signature, Number(v - 27n), msgHash).subarray(1);
}
