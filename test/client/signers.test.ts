import { expect } from 'chai';
import { Wallet } from 'ethers';
import {
  decodeFrameTransaction as decodeJson,
  encodeFrameTransaction,
  type FrameTransaction,
  frameSignatureHash,
  mldsa65Signer,
  secp256k1Signer,
  signFrameTransaction,
} from '../../client/index.js';
import { decodeFrameTransaction, verifyFrameSignatures } from '../../protocol/index.js';
import { mldsaEntry, mldsaKeys } from '../../support/frames.js';

const KEY = `0x${'42'.repeat(32)}` as const;
const SEED = `0x${'07'.repeat(32)}` as const;

describe('client/signers: entries the chain verifies', () => {
  const mldsa = mldsa65Signer(SEED);
  const secp = secp256k1Signer(KEY);

  it('derives each address as the chain does', () => {
    expect(mldsa.address).to.equal(mldsaKeys(Buffer.from('07'.repeat(32), 'hex')).address);
    expect(secp.address).to.equal(new Wallet(KEY).address.toLowerCase());
  });

  it('signs every entry, explicit msg first: the transaction passes the chain signature checks', () => {
    const tx: FrameTransaction = {
      from: mldsa.address,
      maxFeePerGas: 1n,
      frames: [{ mode: 1, flags: 3, executionGas: 100n }],
      signatures: [
        { scheme: 0x65 },
        { scheme: 0x01, signer: secp.address, msg: `0x${'ab'.repeat(32)}` },
        { scheme: 0x01, signer: secp.address },
      ],
    };
    const signed = signFrameTransaction(tx, [secp, mldsa]);
    const decoded = decodeFrameTransaction(encodeFrameTransaction(signed));
    expect(() => verifyFrameSignatures(decoded)).not.to.throw();
    // Deterministic: the same bytes as the repository's ML-DSA helper over the same hash.
    const keys = mldsaKeys(Buffer.from('07'.repeat(32), 'hex'));
    expect(signed.signatures![0]!.signature).to.equal(mldsaEntry(keys, frameSignatureHash(signed)));
    expect(decodeJson(encodeFrameTransaction(signed)).signatures.map((e) => ((e.signature ?? '0x').length - 2) / 2)).to.deep.equal([
      5_261, 65, 65,
    ]);
  });

  it('refuses an entry no signer resolves to, and leaves ARBITRARY entries to the account code', () => {
    const tx: FrameTransaction = { from: mldsa.address, frames: [{ mode: 1, flags: 3 }], signatures: [{ scheme: 0x01 }] };
    expect(() => signFrameTransaction(tx, [mldsa])).to.throw(`signatures[0]: no signer for scheme 0x1 and ${mldsa.address}`);
    const arbitrary = signFrameTransaction({ ...tx, signatures: [{ scheme: 0x00 }] }, []);
    expect(arbitrary.signatures).to.deep.equal([{ scheme: 0x00 }]);
  });
});
