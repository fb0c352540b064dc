import { ecrecover } from '@ethereumjs/util';
import { expect } from 'chai';
import { SigningKey, keccak256 } from 'ethers';
import { ecrecoverPrecompile } from '../../../protocol/evm/ecrecover.js';

const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex.replace(/^0x/, ''), 'hex'));
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const word = (value: bigint) => bytes(value.toString(16).padStart(64, '0'));

/** The public key as hex, or "throws": what the precompile turns into an empty answer. */
const outcome = (recover: () => Uint8Array) => {
  try {
    return Buffer.from(recover()).toString('hex');
  } catch {
    return 'throws';
  }
};

describe('gate: ECRECOVER (0x01) in simulation through native libsecp256k1', () => {
  const digest = bytes(keccak256('0x01'));
  const signature = new SigningKey(`0x${'42'.repeat(32)}`).sign(digest);
  const [r, s, v] = [bytes(signature.r), bytes(signature.s), BigInt(signature.v)];
  const highS = word(ORDER - BigInt(signature.s));
  const flipped = v === 27n ? 28n : 27n;

  type Args = readonly [Uint8Array, bigint, Uint8Array, Uint8Array];
  // (v 0 and 1 never reach it: the precompile answers empty for any v but 27 and 28 first.)
  for (const [name, args] of [
    ['a valid signature', [digest, v, r, s]],
    ['the other recovery id', [digest, flipped, r, s]],
    ['high s (the precompile never required low s)', [digest, flipped, r, highS]],
    ['v 29', [digest, 29n, r, s]],
    ['r zero', [digest, v, word(0n), s]],
    ['s zero', [digest, v, r, word(0n)]],
    ['r at the group order', [digest, v, word(ORDER), s]],
    ['s past the group order', [digest, v, r, word(ORDER + 1n)]],
    ['an r that is no curve point', [digest, v, word(5n), s]],
    ['a digest past the group order', [word(ORDER + 7n), v, r, s]],
  ] as ReadonlyArray<readonly [string, Args]>) {
    it(`${name}: as @ethereumjs/util's ecrecover answers`, () => {
      expect(outcome(() => ecrecoverPrecompile(...args))).to.equal(outcome(() => ecrecover(...args)));
    });
  }

  it('recovers the signer', () => {
    expect(`0x04${Buffer.from(ecrecoverPrecompile(digest, v, r, s)).toString('hex')}`).to.equal(
      new SigningKey(`0x${'42'.repeat(32)}`).publicKey,
    );
  });
});
