import { expect } from 'chai';
import { getBytes } from 'ethers';
import { outcomeOf } from '../helpers/refusals.js';
import { address, anyList, bytes, decodeCanonical, fixed, integer, list, string, U64_MAX, type Item } from '../../protocol/rlp-fields.js';

const item = (hex: string): Item => getBytes(hex);
const decoded = (hex: string) => outcomeOf(() => decodeCanonical(getBytes(hex)));

describe('gate: RLP fields', () => {
  describe('decodeCanonical', () => {
    it('decodes a canonical item spanning the whole payload', () => {
      expect(decoded('0xc3018180')).to.deep.equal([new Uint8Array([1]), new Uint8Array([0x80])]);
    });

    const cases: Array<[string, string, string]> = [
      ['nothing at all', '0x', 'rlp-invalid: the payload is not valid RLP'],
      ['a truncated string', '0x8201', 'rlp-invalid: the payload is not valid RLP'],
      ['bytes after the item', '0x0100', 'rlp-invalid: the payload is not valid RLP'],
      ['a single byte wrapped as a string', '0x8101', 'rlp-noncanonical: the payload is not canonically encoded'],
      ['a long-form length under 56 bytes', '0xb80161', 'rlp-noncanonical: the payload is not canonically encoded'],
      ['a long-form list length under 56 bytes', '0xf80101', 'rlp-noncanonical: the payload is not canonically encoded'],
    ];
    for (const [label, hex, message] of cases) {
      it(`refuses ${label}`, () => {
        expect(decoded(hex)).to.equal(message);
      });
    }
  });

  it('list and anyList take lists (list of an exact arity) and name what is wrong', () => {
    const two = [item('0x01'), item('0x02')];
    expect(outcomeOf(() => list(two, 2, 'pair'))).to.equal(two);
    expect(outcomeOf(() => list(two, 3, 'triple'))).to.equal('rlp-invalid: triple must have 3 items, not 2');
    expect(outcomeOf(() => list(two, 1, 'single'))).to.equal('rlp-invalid: single must have 1 items, not 2');
    expect(outcomeOf(() => list(item('0x01'), 2, 'pair'))).to.equal('rlp-invalid: pair must be a list');
    expect(outcomeOf(() => anyList([], 'entries'))).to.deep.equal([]);
    expect(outcomeOf(() => anyList(item('0x'), 'entries'))).to.equal('rlp-invalid: entries must be a list');
  });

  it('bytes and string take byte strings only', () => {
    expect(outcomeOf(() => string(item('0xABcd'), 'data'))).to.equal('0xabcd');
    expect(outcomeOf(() => string(item('0x'), 'data'))).to.equal('0x');
    expect(outcomeOf(() => bytes([], 'data'))).to.equal('rlp-invalid: data must be a byte string');
    expect(outcomeOf(() => string([], 'data'))).to.equal('rlp-invalid: data must be a byte string');
  });

  it('fixed takes exactly the length asked', () => {
    expect(outcomeOf(() => fixed(item(`0x${'01'.repeat(32)}`), 32, 'key'))).to.equal(`0x${'01'.repeat(32)}`);
    expect(outcomeOf(() => fixed(item(`0x${'01'.repeat(31)}`), 32, 'key'))).to.equal('rlp-invalid: key must be 32 bytes');
    expect(outcomeOf(() => fixed(item(`0x${'01'.repeat(33)}`), 32, 'key'))).to.equal('rlp-invalid: key must be 32 bytes');
  });

  it('integer reads minimal big-endian bytes up to and including its maximum', () => {
    expect(outcomeOf(() => integer(item('0x'), 'nonce', U64_MAX))).to.equal(0n);
    expect(outcomeOf(() => integer(item(`0x${'ff'.repeat(8)}`), 'nonce', U64_MAX))).to.equal(U64_MAX);
    expect(outcomeOf(() => integer(item('0x010000000000000000'), 'nonce', U64_MAX))).to.equal('rlp-invalid: nonce is out of range');
    expect(outcomeOf(() => integer(item('0x01'), 'y_parity', 1n))).to.equal(1n);
    expect(outcomeOf(() => integer(item('0x02'), 'y_parity', 1n))).to.equal('rlp-invalid: y_parity is out of range');
    expect(outcomeOf(() => integer(item('0x00'), 'nonce', U64_MAX))).to.equal('rlp-noncanonical: nonce has leading zero bytes');
    expect(outcomeOf(() => integer(item('0x0001'), 'nonce', U64_MAX))).to.equal('rlp-noncanonical: nonce has leading zero bytes');
    expect(outcomeOf(() => integer([], 'nonce', U64_MAX))).to.equal('rlp-invalid: nonce must be a byte string');
  });

  it('address takes 20 bytes, or nothing when optional', () => {
    const twenty = `0x${'Ab'.repeat(20)}`;
    expect(outcomeOf(() => address(item(twenty), 'to', false))).to.equal(twenty.toLowerCase());
    expect(outcomeOf(() => address(item(twenty), 'to', true))).to.equal(twenty.toLowerCase());
    expect(outcomeOf(() => address(item('0x'), 'to', true))).to.equal(undefined);
    expect(outcomeOf(() => address(item('0x'), 'sender', false))).to.equal('rlp-invalid: sender must be 20 bytes');
    expect(outcomeOf(() => address(item(`0x${'01'.repeat(19)}`), 'sender', false))).to.equal('rlp-invalid: sender must be 20 bytes');
    expect(outcomeOf(() => address(item(`0x${'01'.repeat(21)}`), 'to', true))).to.equal('rlp-invalid: to must be empty or 20 bytes');
    expect(outcomeOf(() => address([], 'to', true))).to.equal('rlp-invalid: to must be a byte string');
  });
});
