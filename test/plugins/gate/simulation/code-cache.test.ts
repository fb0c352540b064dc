import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { CODE_CACHE_MAX_BYTES, codeEntry, codeHashOf } from '../../../../plugins/gate/simulation/code-cache.js';

/** Code of `bytes` bytes, distinct per `salt`, as a fresh string (not one V8 already holds). */
const codeOf = (bytes: number, salt: number) => `0x${salt.toString(16).padStart(8, '0')}${'5b'.repeat(bytes - 4)}`.slice(0);

describe('gate: code decoded and hashed once per distinct code', () => {
  it('decodes the code and hashes it with keccak-256; no code is empty with the hash 0x', () => {
    const entry = codeEntry('0x6001600055');
    expect([Buffer.from(entry.bytes).toString('hex'), entry.hashHex, Buffer.from(entry.hash).toString('hex')]).to.deep.equal([
      '6001600055',
      keccak256('0x6001600055'),
      keccak256('0x6001600055').slice(2),
    ]);
    expect([codeEntry('0x').bytes.length, codeHashOf('0x'), codeHashOf('0x6001600055')]).to.deep.equal([
      0,
      '0x',
      keccak256('0x6001600055'),
    ]);
  });

  it('hands out the same bytes object for the same code read twice (what jump analysis is cached on)', () => {
    const first = codeEntry(codeOf(24_576, 1));
    const again = codeEntry(codeOf(24_576, 1));
    expect(again).to.equal(first);
    expect(codeEntry(codeOf(24_576, 2)).bytes).to.not.equal(first.bytes);
  });

  it(`holds at most ${CODE_CACHE_MAX_BYTES / 2 ** 20} MiB of code: the least recently used goes first`, () => {
    const size = 1024 * 1024;
    // Each entry holds its hex (2 bytes a byte, plus 0x) and its bytes.
    const fits = Math.floor(CODE_CACHE_MAX_BYTES / (3 * size + 2));
    const first = codeEntry(codeOf(size, 1_000));
    const second = codeEntry(codeOf(size, 1_001));
    for (let i = 2; i < fits; i++) codeEntry(codeOf(size, 1_000 + i));
    expect(codeEntry(codeOf(size, 1_000))).to.equal(first); // used again: now the most recent
    codeEntry(codeOf(size, 5_000)); // one past the bound: the least recently used (second) goes
    expect(codeEntry(codeOf(size, 1_000))).to.equal(first);
    expect(codeEntry(codeOf(size, 1_001))).to.not.equal(second);
  });
});
