/**
 * Hex and keccak-256 on the hot path. ethers' `getBytes` and `keccak256` parse hex two
 * characters at a time in JS; on a 5 KB frame transaction that was a fifth of the gate's CPU.
 * keccak-256 is native where its binary loads (crypto-backend.ts; docs/decisions/0004).
 */
import { keccak256 } from './crypto-backend.js';

export { keccak256 };

/**
 * The bytes of `0x` hex that is already known to be well formed (validated input, or what
 * ethers' RLP decoder produced): Buffer's parser stops silently at the first bad character.
 */
export function bytesOfHex(hex: string): Uint8Array {
  return Buffer.from(hex.slice(2), 'hex');
}

export function keccakHex(bytes: Uint8Array): string {
  return `0x${keccak256(bytes).toString('hex')}`;
}
