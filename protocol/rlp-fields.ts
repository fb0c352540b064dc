/**
 * Reading a decoded RLP payload field by field: every shape error refuses with rlp-invalid,
 * every non-canonical form with rlp-noncanonical. Shared by both codecs.
 *
 * RLP is @ethereumjs/rlp's, on bytes: ethers' RLP works on hex strings and took ~600 µs to
 * decode and re-encode one 5 KB ML-DSA frame transaction, ~40 µs here.
 */
import { RLP } from '@ethereumjs/rlp';
import { decodeRlp } from 'ethers';
import { refuse } from './refusal.js';

export type Item = Uint8Array | Item[];

export const U64_MAX = (1n << 64n) - 1n;
export const U256_MAX = (1n << 256n) - 1n;

export const encodeRlp = (item: Item): Uint8Array => RLP.encode(item);
const hex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex')}`;

/**
 * Decodes one RLP item that must span all of `body`, canonically encoded. The decoder refuses
 * every non-canonical length; what it refuses but ethers' lenient decoder reads is named
 * rlp-noncanonical (only bad input pays for the second look). Every non-canonical form is
 * longer than the canonical encoding of the same data, so equal lengths prove canonical bytes.
 */
export function decodeCanonical(body: Uint8Array): Item {
  // The decoder reads nothing at all as an empty string.
  if (body.length === 0) refuse('rlp-invalid', 'the payload is not valid RLP');
  let payload: Item;
  try {
    payload = RLP.decode(body);
  } catch {
    try {
      decodeRlp(body);
    } catch {
      refuse('rlp-invalid', 'the payload is not valid RLP');
    }
    refuse('rlp-noncanonical', 'the payload is not canonically encoded');
  }
  if (encodeRlp(payload).length !== body.length) refuse('rlp-noncanonical', 'the payload is not canonically encoded');
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

export function bytes(item: Item, what: string): Uint8Array {
  if (Array.isArray(item)) refuse('rlp-invalid', `${what} must be a byte string`);
  return item;
}

/** A byte string as 0x hex. */
export function string(item: Item, what: string): string {
  return hex(bytes(item, what));
}

/** A byte string of exactly `length` bytes, as 0x hex. */
export function fixed(item: Item, length: number, what: string): string {
  const value = bytes(item, what);
  if (value.length !== length) refuse('rlp-invalid', `${what} must be ${length} bytes`);
  return hex(value);
}

export function integer(item: Item, what: string, max: bigint): bigint {
  const value = bytes(item, what);
  if (value.length === 0) return 0n;
  if (value[0] === 0) refuse('rlp-noncanonical', `${what} has leading zero bytes`);
  const number = BigInt(hex(value));
  if (number > max) refuse('rlp-invalid', `${what} is out of range`);
  return number;
}

/** A lower-case 20-byte address; with `optional`, the empty string gives undefined. */
export function address(item: Item, what: string, optional: boolean): string | undefined {
  const value = bytes(item, what);
  if (optional && value.length === 0) return undefined;
  if (value.length !== 20) refuse('rlp-invalid', `${what} must be ${optional ? 'empty or ' : ''}20 bytes`);
  return hex(value);
}
