/**
 * Account code as the embedded EVM and the dependency checks use it: decoded and hashed once per
 * address per head (HeadState.codeEntry), not on every access. The EVM reads an account's code
 * and code hash on every EXTCODE*, CALL* and account access; decoding 24 KB of hex and hashing it
 * each time made a loop of EXTCODEHASH over one 24 KB contract cost ~1 s per 100,000-gas
 * simulation (BENCHMARKS.md "Simulation cost").
 *
 * Not a cache keyed by the code's hex: V8 hashes no string longer than 16,383 characters (a
 * string that long hashes by its length), so every 24 KB code falls in one bucket, and a lookup
 * compared the hex of each same-length code held, up to its first difference. Forty-eight
 * contracts differing in their last byte made an EXTCODEHASH loop cost ~60 ms.
 */
import { keccak256 } from './hex.js';

export interface CodeEntry {
  /** The code; never written to (the EVM copies what it reads of it). */
  readonly bytes: Uint8Array;
  /** keccak-256 of the code; empty for no code. */
  readonly hash: Uint8Array;
  /** The same, as 0x hex; `0x` for no code. */
  readonly hashHex: string;
}

const NO_CODE: CodeEntry = { bytes: new Uint8Array(0), hash: new Uint8Array(0), hashHex: '0x' };

/** `code` (0x hex as the EL returns it, `0x` for none) decoded and hashed. */
export function decodeCode(code: string): CodeEntry {
  if (code === '0x') return NO_CODE;
  const bytes = Buffer.from(code.slice(2), 'hex');
  const hash = keccak256(bytes);
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), hash, hashHex: `0x${hash.toString('hex')}` };
}

/** keccak-256 of `0x` code, `0x` for none. */
export const codeHashOf = (code: string): string => decodeCode(code).hashHex;
