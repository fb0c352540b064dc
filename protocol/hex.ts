/**
 * Hex and keccak-256 on the hot path. ethers' `getBytes` and `keccak256` parse hex two
 * characters at a time in JS; on a 5 KB frame transaction that was a fifth of the gate's CPU.
 * keccak-256 is native: libkeccak's sponge from the `keccak` package's binding, used directly.
 * The package's own API wraps every hash in a stream object, which cost more than hashing a
 * 110-byte transfer (4.0 → 1.7 µs a hash; docs/decisions/0004).
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

interface KeccakSponge {
  initialize(rateBits: number, capacityBits: number): void;
  absorb(data: Buffer): void;
  squeeze(bytes: number): Buffer;
}

// The binding itself, loaded the way the package loads it (node-gyp-build, resolved from the
// package). Its main entry silently falls back to a pure-JS keccak, slower than @noble's;
// without the binding the process should fail at start, not run slow.
const keccakPackage = createRequire(import.meta.url).resolve('keccak/package.json');
const loadBinding = createRequire(keccakPackage)('node-gyp-build') as (dir: string) => new () => KeccakSponge;
const KeccakState = loadBinding(dirname(keccakPackage));
/** keccak-256: rate 1088 bits, capacity 512 (the package's own parameters for "keccak256"). */
const RATE_BITS = 1088;
const CAPACITY_BITS = 512;
// One sponge for the process: hashing is synchronous, so no two hashes ever share it.
const sponge = new KeccakState();

/**
 * The bytes of `0x` hex that is already known to be well formed (validated input, or what
 * ethers' RLP decoder produced): Buffer's parser stops silently at the first bad character.
 */
export function bytesOfHex(hex: string): Uint8Array {
  return Buffer.from(hex.slice(2), 'hex');
}

export function keccak256(bytes: Uint8Array): Buffer {
  const data = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  sponge.initialize(RATE_BITS, CAPACITY_BITS);
  sponge.absorb(data);
  return sponge.squeeze(32);
}

export function keccakHex(bytes: Uint8Array): string {
  return `0x${keccak256(bytes).toString('hex')}`;
}
