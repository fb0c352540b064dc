/**
 * Account code as the embedded EVM and the dependency checks use it, decoded and hashed once:
 * the EVM reads an account's code and code hash on every EXTCODE*, CALL* and account access,
 * and decoding 24 KB of hex and hashing it each time made a loop of EXTCODEHASH over one 24 KB
 * contract cost ~1 s per 100,000-gas simulation (BENCHMARKS.md "Simulation cost").
 *
 * Content-addressed, so head-independent: keyed by the code's hex as the EL returned it
 * (HeadState hands every reader of a head the same string, whose hash V8 keeps), one entry per
 * distinct code, shared by every simulation of this thread. Bounded by bytes held; the least
 * recently used code goes first. The same code always yields the same `bytes` object, which
 * the jump-destination cache (jump-analysis.ts) keys on.
 */
import { keccak256 } from '../hex.js';

export interface CodeEntry {
  /** The code; never written to (the EVM copies what it reads of it). */
  readonly bytes: Uint8Array;
  /** keccak-256 of the code. */
  readonly hash: Uint8Array;
  /** The same, as 0x hex. */
  readonly hashHex: string;
}

const EMPTY: CodeEntry = { bytes: new Uint8Array(0), hash: new Uint8Array(0), hashHex: '0x' };

/** Code (hex and decoded) a thread keeps: ~450 contracts of 24 KB, ten times what one simulation can touch. */
export const CODE_CACHE_MAX_BYTES = 32 * 1024 * 1024;

const entries = new Map<string, CodeEntry>();
let heldBytes = 0;

/** The decoded code and its hash (`0x`: no code, an empty hash). */
export function codeEntry(code: string): CodeEntry {
  if (code === '0x') return EMPTY;
  let entry = entries.get(code);
  if (entry !== undefined) {
    // Most recently used last: eviction takes from the front.
    entries.delete(code);
    entries.set(code, entry);
    return entry;
  }
  const bytes = Buffer.from(code.slice(2), 'hex');
  const hash = keccak256(bytes);
  entry = { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), hash, hashHex: `0x${hash.toString('hex')}` };
  const size = code.length + bytes.length;
  for (const [key, old] of entries) {
    if (heldBytes + size <= CODE_CACHE_MAX_BYTES) break;
    entries.delete(key);
    heldBytes -= key.length + old.bytes.length;
  }
  entries.set(code, entry);
  heldBytes += size;
  return entry;
}

/** keccak-256 of `0x` code, `0x` for none (dependencies.ts). */
export const codeHashOf = (code: string): string => codeEntry(code).hashHex;
