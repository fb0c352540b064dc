/**
 * ECRECOVER (precompile 0x01) through native libsecp256k1, the recovery the gate already uses
 * for transaction senders (signatures.ts), given to the EVM as its Common's
 * `customCrypto.ecrecover` (the package's documented hook). Its default, @noble/curves in JS,
 * took ~2 ms a call here: a 100,000-gas loop of ECRECOVER cost ~21 P256 verifications' worth.
 *
 * Same contract as @ethereumjs/util's `ecrecover`: the 64-byte public key, or a throw (the
 * precompile then answers empty) for v other than 27 or 28, r or s zero or not below the group
 * order, or an r that is no curve point. High s is accepted (the precompile never refused it).
 */
import { createRequire } from 'node:module';
import type * as Secp256k1 from 'secp256k1';

const secp256k1 = createRequire(import.meta.url)('secp256k1/bindings') as typeof Secp256k1;

/** The precompile hands over 32 bytes each of hash, r and s (its input right-padded to 128 bytes). */
export function nativeEcrecover(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array): Uint8Array {
  if (v !== 27n && v !== 28n) throw new Error('invalid signature v value');
  const signature = new Uint8Array(64);
  signature.set(r, 0);
  signature.set(s, 32);
  return secp256k1.ecdsaRecover(signature, Number(v - 27n), msgHash, false).subarray(1);
}
