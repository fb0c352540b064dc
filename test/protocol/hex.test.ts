import { expect } from 'chai';
import { keccak256 as ethersKeccak } from 'ethers';
import { bytesOfHex, keccak256, keccakHex } from '../../protocol/hex.js';

/** `length` fixed bytes: a counter pattern, every byte value in turn. */
const patterned = (length: number) => Uint8Array.from({ length }, (_, i) => (i * 37 + 11) & 0xff);

describe('hex and keccak-256', () => {
  // Lengths around keccak-256's 136-byte rate, where padding changes, and a frame transaction's size.
  for (const length of [0, 1, 31, 32, 135, 136, 137, 272, 5_300]) {
    it(`hashes ${length} bytes as ethers does`, () => {
      const bytes = patterned(length);
      expect(keccakHex(bytes)).to.equal(ethersKeccak(bytes));
    });
  }

  it('hashes a view into a larger buffer by its own bytes only', () => {
    const whole = Buffer.from(patterned(300));
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 10, 100);
    expect(keccakHex(view)).to.equal(ethersKeccak(whole.subarray(10, 110)));
  });

  it('returns a digest that the next hash does not overwrite', () => {
    const first = keccak256(Buffer.from('first'));
    const copy = Buffer.from(first);
    keccak256(Buffer.from('second'));
    expect(first.equals(copy)).to.equal(true);
  });

  it('reads 0x hex into bytes', () => {
    expect([...bytesOfHex('0x00ff10')]).to.deep.equal([0, 255, 16]);
  });
});
