/**
 * Hex and keccak-256 on the hot path. ethers' `getBytes` and `keccak256` parse hex two
 * characters at a time in JS; on a 5 KB frame transaction that was a fifth of the gate's CPU.
 * keccak-256 is native (the `keccak` package's libkeccak binding): 12× @noble/hashes on a 5 KB
 * frame transaction, 2× on a 110-byte transfer (BENCHMARKS.md, Submissions).
 */
import { createRequire } from 'node:module';
import type createKeccak from 'keccak';

// The binding itself: the package's main entry silently falls back to a pure-JS keccak, slower
// than @noble's; without the binding the process should fail at start, not run slow.
const nativeKeccak = createRequire(import.meta.url)('keccak/bindings.js') as typeof createKeccak;

/**
 * The bytes of `0x` hex that is already known to be well formed (validated input, or what
 * ethers' RLP decoder produced): Buffer's parser stops silently at the first bad character.
 */
export function bytesOfHex(hex: string): Uint8Array {
  return Buffer.from(hex.slice(2), 'hex');
}

export function keccak256(bytes: Uint8Array): Buffer {
  const data = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return nativeKeccak('keccak256').update(data).digest();
}

export function keccakHex(bytes: Uint8Array): string {
  return '0x' + keccak256(bytes).toString('hex');
}
