/**
 * Reading a decoded RLP payload field by field, on ethers' RLP: every shape error refuses with
 * rlp-invalid, every non-canonical form with rlp-noncanonical. Shared by both codecs.
 */
import { decodeRlp, encodeRlp, type RlpStructuredData } from 'ethers';
import { refuse } from './refusal.js';

export type Item = RlpStructuredData;

export const U64_MAX = (1n << 64n) - 1n;
export const U256_MAX = (1n << 256n) - 1n;

/**
 * Decodes one RLP item that must span all of `body`, canonically encoded. Every non-canonical
 * form (a non-minimal length prefix, the long form below 56 bytes, a wrapped single byte) is
 * longer than the canonical encoding of the same data, so equal lengths prove canonical bytes.
 */
export function decodeCanonical(body: Uint8Array): Item {
  let payload: Item;
  try {
    payload = decodeRlp(body);
  } catch {
    refuse('rlp-invalid', 'the payload is not valid RLP');
  }
  if (encodeRlp(payload).length !== 2 + 2 * body.length) refuse('rlp-noncanonical', 'the payload is not canonically encoded');
  return payload;
}

export function anyList(item: Item, what: string): readonly Item[] {
  if (!Array.isArray(item)) refuse('rlp-invalid', `${what} must be a list`);
  return item;
}

export function list(item: Item, arity: number, what: string): readonly Item[] {
  const items = anyList(item, what);
  if (items.length !== arity) refuse('rlp-invalid', `${what} must have ${arity} items, not ${items.length}`);
  return items;
}

export function string(item: Item, what: string): string {
  if (typeof item !== 'string') refuse('rlp-invalid', `${what} must be a byte string`);
  return item;
}

/** A byte string of exactly `bytes` bytes. */
export function fixed(item: Item, bytes: number, what: string): string {
  const hex = string(item, what);
  if (hex.length !== 2 + 2 * bytes) refuse('rlp-invalid', `${what} must be ${bytes} bytes`);
  return hex;
}

export function integer(item: Item, what: string, max: bigint): bigint {
  const hex = string(item, what);
  if (hex === '0x') return 0n;
  if (hex.startsWith('0x00')) refuse('rlp-noncanonical', `${what} has leading zero bytes`);
  const value = BigInt(hex);
  if (value > max) refuse('rlp-invalid', `${what} is out of range`);
  return value;
}

/** A lower-case 20-byte address; with `optional`, the empty string gives undefined. */
export function address(item: Item, what: string, optional: boolean): string | undefined {
  const hex = string(item, what);
  if (optional && hex === '0x') return undefined;
  if (hex.length !== 42) refuse('rlp-invalid', `${what} must be ${optional ? 'empty or ' : ''}20 bytes`);
  return hex.toLowerCase();
}
