/**
 * keccak-256 and secp256k1 public-key recovery, the two primitives on every submission's path:
 * native where the binaries load (libkeccak's sponge from the `keccak` package, libsecp256k1 from
 * `secp256k1`: 12x and ~17x the pure-JS ones, decision 0004), otherwise the pure-JS @noble
 * implementations the project already carries, so that the ingress runs on any machine (the
 * packages ship prebuilt binaries for some platforms only, and npm 11 runs no install script to
 * build the others). `SVC_PORTABLE_CRYPTO=1` forces the fallback (the tests run both ways).
 * `cryptoBackend` says which is in use and why, for one line in the log at start.
 *
 * Not the packages' own entry points: each falls back silently to a pure-JS implementation
 * slower than @noble's (and the keccak one wraps every hash in a stream object, which cost
 * more than hashing a 110-byte transfer).
 */
import { secp256k1 as nobleSecp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type * as Secp256k1 from 'secp256k1';

interface KeccakSponge {
  initialize(rateBits: number, capacityBits: number): void;
  absorb(data: Buffer): void;
  squeeze(bytes: number): Buffer;
}

export interface CryptoBackend {
  readonly kind: 'native' | 'portable';
  /** Why the fallback runs: forced, or what failed to load. */
  readonly why?: string;
}

/** keccak-256: rate 1088 bits, capacity 512 (the `keccak` package's own parameters for "keccak256"). */
const RATE_BITS = 1088;
const CAPACITY_BITS = 512;

type Keccak = (bytes: Uint8Array) => Buffer;
/** The 65-byte uncompressed public key that signed `digest` with the 64-byte `signature` (r ‖ s) and `recovery` 0-3; throws for none. */
type Recover = (signature: Uint8Array, recovery: number, digest: Uint8Array) => Uint8Array;

const asBuffer = (bytes: Uint8Array) => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/** The native implementations; throws where their binaries do not load. */
export function nativeBackend(): { keccak: Keccak; recover: Recover } {
  const require = createRequire(import.meta.url);
  // The binding itself, loaded the way the package loads it (node-gyp-build, resolved from the package).
  const keccakPackage = require.resolve('keccak/package.json');
  const loadBinding = createRequire(keccakPackage)('node-gyp-build') as (dir: string) => new () => KeccakSponge;
  // One sponge for the process: hashing is synchronous, so no two hashes ever share it.
  const sponge = new (loadBinding(dirname(keccakPackage)))();
  const secp256k1 = require('secp256k1/bindings') as typeof Secp256k1;
  return {
    keccak: (bytes) => {
      sponge.initialize(RATE_BITS, CAPACITY_BITS);
      sponge.absorb(asBuffer(bytes));
      return sponge.squeeze(32);
    },
    recover: (signature, recovery, digest) => secp256k1.ecdsaRecover(signature, recovery, digest, false),
  };
}

/** The pure-JS implementations, which load everywhere. */
export const portableBackend = (): { keccak: Keccak; recover: Recover } => ({
  keccak: (bytes) => asBuffer(keccak_256(bytes)),
  recover: (signature, recovery, digest) =>
    nobleSecp256k1.Signature.fromBytes(signature, 'compact').addRecoveryBit(recovery).recoverPublicKey(digest).toBytes(false),
});

function chooseBackend(): { keccak: Keccak; recover: Recover; backend: CryptoBackend } {
  if (process.env.SVC_PORTABLE_CRYPTO === '1') return { ...portableBackend(), backend: { kind: 'portable', why: 'SVC_PORTABLE_CRYPTO=1' } };
  try {
    return { ...nativeBackend(), backend: { kind: 'native' } };
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    return { ...portableBackend(), backend: { kind: 'portable', why: `native binaries did not load (${why})` } };
  }
}

const chosen = chooseBackend();

export const cryptoBackend: CryptoBackend = chosen.backend;
export const keccak256: Keccak = chosen.keccak;
export const recoverPublicKey: Recover = chosen.recover;

/** A signature of 32 bytes of 0x01 by the key of 32 bytes of 0x02: what `warmRecovery` recovers. */
const WARM_SIGNATURE = Buffer.from(
  '9d0bad576719d32ae76bedb34c774866673cbde3f4e12951555c9408e6ce774b2876e7102f204f6bfee26c967c3926ce702cf97d4b010062e193f763190f6776',
  'hex',
);

/**
 * The pure-JS recovery builds its tables on its first call in a thread (~10-30 ms): a thread that
 * recovers senders does it as it starts, so that the first source it serves is not charged for it.
 * Nothing to do natively.
 */
export function warmRecovery(): void {
  if (cryptoBackend.kind === 'portable') recoverPublicKey(WARM_SIGNATURE, 0, new Uint8Array(32).fill(1));
}
