import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { codeHashOf, decodeCode } from '../../protocol/code-entry.js';

describe('gate: code decoded and hashed', () => {
  it('decodes the code and hashes it with keccak-256; no code is empty with the hash 0x', () => {
    const entry = decodeCode('0x6001600055');
    expect([Buffer.from(entry.bytes).toString('hex'), entry.hashHex, Buffer.from(entry.hash).toString('hex')]).to.deep.equal([
      '6001600055',
      keccak256('0x6001600055'),
      keccak256('0x6001600055').slice(2),
    ]);
    expect([decodeCode('0x').bytes.length, decodeCode('0x').hash.length, codeHashOf('0x'), codeHashOf('0x6001600055')]).to.deep.equal([
      0,
      0,
      '0x',
      keccak256('0x6001600055'),
    ]);
  });
});
