import { p256 } from '@noble/curves/nist.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { expect } from 'chai';
import { concat, dataSlice, getBytes, keccak256, SigningKey, toBeHex, Transaction } from 'ethers';
import { readFileSync } from 'node:fs';
import { checkFrameTransaction } from '../../protocol/mempool/policy.js';
import { decodeFrameTransaction } from '../../protocol/frame-codec.js';
import { recoverAddress, verifyFrameSignatures } from '../../protocol/signatures.js';
import {
  encodeFrameTx,
  frameSigHash,
  mldsaEntry,
  mldsaKeys,
  secp256k1Entry,
  transferFrameTx,
  type FrameTxFields,
} from '../../support/frames.js';
import { walletFor } from '../../support/keys.js';
import { verdictOf } from '../helpers/refusals.js';

const VECTOR = JSON.parse(readFileSync('test/protocol/mldsa65-vector.json', 'utf8')) as {
  seed: string;
  publicKey: string;
  sender: string;
  sigHash: string;
  hash: string;
  raw: string;
};
const OTHER = '0x0000000000000000000000000000000000001234';
/** What the entries with an explicit msg sign instead of the signature hash. */
const MSG = `0x${'ab'.repeat(32)}`;
const word = (value: bigint) => toBeHex(value, 32);
const addressOf = (uncompressed: Uint8Array) => `0x${keccak256(uncompressed.subarray(1)).slice(26)}`;

const verdict = (raw: string) => verdictOf(() => verifyFrameSignatures(decodeFrameTransaction(raw)));

/** The static checks, then the signatures: everything the gate decides before any state. */
const checked = (raw: string) =>
  verdictOf(() => {
    const tx = decodeFrameTransaction(raw);
    checkFrameTransaction(tx, { chainId: 8141n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n });
    verifyFrameSignatures(tx);
  });

/** A transaction whose one entry signs MSG and names `signer`, so that neither depends on the sender. */
const withExplicitEntry = (scheme: number, signer: string, signature: string): string =>
  encodeFrameTx({
    sender: OTHER,
    frames: [{ mode: 1, flags: 3, executionGas: 50_000n }],
    signatures: [{ scheme, signer, msg: MSG, signature }],
  });

/** Flips one bit of the byte at `offset` from the end of the raw transaction's signature data. */
function tamper(raw: string, offsetFromEnd: number): string {
  const bytes = getBytes(raw);
  const at = bytes.length - offsetFromEnd;
  bytes[at] = bytes[at]! ^ 0x01;
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

describe('gate: signatures', () => {
  it('recovers senders with native secp256k1 exactly as ethers does', async () => {
    const wallet = walletFor('recovery against ethers');
    const parities = new Set<number>();
    for (let nonce = 0; nonce < 4; nonce++) {
      const tx = Transaction.from(
        await wallet.signTransaction({ chainId: 8141, nonce, to: OTHER, gasLimit: 21_000, maxFeePerGas: 1n, type: 2 }),
      );
      const sig = tx.signature!;
      parities.add(sig.yParity);
      expect(recoverAddress(getBytes(tx.unsignedHash), getBytes(sig.r), getBytes(sig.s), sig.yParity)).to.equal(
        wallet.address.toLowerCase(),
      );
    }
    expect([...parities].sort(), 'both y parities among the fixed signatures').to.deep.equal([0, 1]);
  });

  describe('ML-DSA-65 (scheme 0x65)', () => {
    it('keeps a deterministic vector: the same seed signs the same bytes', () => {
      const keys = mldsaKeys(getBytes(VECTOR.seed));
      expect(keys.address).to.equal(VECTOR.sender);
      const { raw } = transferFrameTx({ sender: keys.address, to: OTHER, value: 1n, scheme: 0x65, sign: (d) => mldsaEntry(keys, d) });
      expect(raw).to.equal(VECTOR.raw);
      expect(keccak256(raw)).to.equal(VECTOR.hash);
      expect(decodeFrameTransaction(raw).sigHash).to.equal(VECTOR.sigHash);
    });

    it('passes the static checks for the valid vector', () => {
      expect(verdict(VECTOR.raw)).to.equal('accepted');
    });

    it('refuses a tampered signature, saying which entry and why', () => {
      expect(verdict(tamper(VECTOR.raw, 200))).to.equal('mldsa-verify-failed: signature 0: the ML-DSA-65 signature does not verify');
    });

    it('refuses a key that does not belong to the signer', () => {
      const other = mldsaKeys(new Uint8Array(32).fill(7));
      const { raw } = transferFrameTx({ sender: VECTOR.sender, to: OTHER, value: 1n, scheme: 0x65, sign: (d) => mldsaEntry(other, d) });
      expect(verdict(raw)).to.equal(`mldsa-signer-mismatch: signature 0: the ML-DSA-65 key's address is not the signer ${VECTOR.sender}`);
    });

    it('refuses a signature over another digest', () => {
      const keys = mldsaKeys(getBytes(VECTOR.seed));
      const { raw } = transferFrameTx({
        sender: keys.address,
        to: OTHER,
        value: 1n,
        scheme: 0x65,
        sign: () => mldsaEntry(keys, keccak256('0x01')),
      });
      expect(verdict(raw)).to.match(/^mldsa-verify-failed: signature 0/);
    });
  });

  describe('SECP256K1 (scheme 0x01)', () => {
    const key = new SigningKey(`0x${'01'.repeat(32)}`);
    const sender = `0x${keccak256(`0x${key.publicKey.slice(4)}`).slice(26)}`;

    it('verifies an entry over the signature hash', () => {
      const { raw } = transferFrameTx({ sender, to: OTHER, value: 1n, scheme: 1, sign: (d) => secp256k1Entry(key.privateKey, d) });
      expect(verdict(raw)).to.equal('accepted');
    });

    it('refuses an entry by another key', () => {
      const { raw } = transferFrameTx({ sender, to: OTHER, value: 1n, scheme: 1, sign: (d) => secp256k1Entry(`0x${'02'.repeat(32)}`, d) });
      expect(verdict(raw)).to.equal('sig-invalid: signature 0: the SECP256K1 signature does not recover the signer');
    });

    it('refuses a high-s signature', () => {
      const { raw } = transferFrameTx({
        sender,
        to: OTHER,
        value: 1n,
        scheme: 1,
        sign: () => concat(['0x00', `0x${'11'.repeat(32)}`, `0x${'ff'.repeat(32)}`]),
      });
      expect(verdict(raw)).to.equal('sig-invalid: signature 0: r or s out of range (s must be low)');
    });

    const N = secp256k1.Point.CURVE().n;
    type Sig = { parity: number; r: bigint; s: bigint };
    /** A transfer whose one entry is the sender's signature as `edit` alters it. */
    const altered = (edit: (sig: Sig, digest: string) => Sig) =>
      transferFrameTx({
        sender,
        to: OTHER,
        value: 1n,
        scheme: 1,
        sign: (d) => {
          const sig = key.sign(d);
          const { parity, r, s } = edit({ parity: sig.yParity, r: BigInt(sig.r), s: BigInt(sig.s) }, d);
          return concat([new Uint8Array([parity]), word(r), word(s)]);
        },
      }).raw;

    it('refuses a y_parity other than 0 or 1, and r or s of 0 or n', () => {
      for (const parity of [2, 3, 27]) {
        expect(verdict(altered((sig) => ({ ...sig, parity: parity + (sig.parity % 2) }))), `parity ${parity}`).to.equal(
          'sig-invalid: signature 0: y_parity must be 0 or 1',
        );
      }
      for (const [label, edit] of [
        ['r = 0', { r: 0n }],
        ['r = n', { r: N }],
        ['s = 0', { s: 0n }],
        ['s = n', { s: N }],
      ] as const) {
        expect(verdict(altered((sig) => ({ ...sig, ...edit }))), label).to.equal(
          'sig-invalid: signature 0: r or s out of range (s must be low)',
        );
      }
    });

    // (r, n − s) with the parity flipped recovers the same key over the same digest: only the
    // low-s rule tells it apart from the original.
    it('refuses the high-s twin of a valid entry', () => {
      const raw = altered(({ parity, r, s }, d) => {
        const twin = { r, s: N - s, parity: 1 - parity };
        expect(
          addressOf(new secp256k1.Signature(twin.r, twin.s).addRecoveryBit(twin.parity).recoverPublicKey(getBytes(d)).toBytes(false)),
        ).to.equal(sender);
        return twin;
      });
      expect(verdict(raw)).to.equal('sig-invalid: signature 0: r or s out of range (s must be low)');
    });

    // Any (r, s) with r an x-coordinate recovers some key: entries signed "by" that key, at the
    // exact bound.
    it('takes s = n/2 and refuses s = n/2 + 1', () => {
      const half = secp256k1.Point.CURVE().n >> 1n;
      const r = BigInt(key.sign(MSG).r);
      const entry = (s: bigint) => {
        const signer = addressOf(new secp256k1.Signature(r, s).addRecoveryBit(0).recoverPublicKey(getBytes(MSG)).toBytes(false));
        return withExplicitEntry(1, signer, concat(['0x00', word(r), word(s)]));
      };
      expect(verdict(entry(half))).to.equal('accepted');
      expect(verdict(entry(half + 1n))).to.equal('sig-invalid: signature 0: r or s out of range (s must be low)');
    });
  });

  describe('P256 (scheme 0x02)', () => {
    const N = p256.Point.CURVE().n;
    const secret = new Uint8Array(32).fill(0x11);
    const publicKey = p256.getPublicKey(secret, false);
    const signer = addressOf(publicKey);
    const signWith = (key: Uint8Array) => (digest: string) =>
      concat([p256.sign(getBytes(digest), key, { prehash: false, lowS: true }), p256.getPublicKey(key, false).subarray(1)]);
    const sign = signWith(secret);
    const tx = (signature: (d: string) => string): string => {
      const fields: FrameTxFields = {
        sender: signer,
        frames: [{ mode: 1, flags: 3, executionGas: 50_000n }],
        signatures: [{ scheme: 2 }],
      };
      fields.signatures[0]!.signature = signature(frameSigHash(fields));
      return encodeFrameTx(fields);
    };

    it('verifies an entry whose key hashes to the signer', () => {
      expect(verdict(tx(sign))).to.equal('accepted');
    });

    it('refuses a signature over another digest', () => {
      expect(verdict(tx(() => sign(keccak256('0x02'))))).to.equal('sig-invalid: signature 0: the P256 signature does not verify');
    });

    it('refuses a valid signature by a key that is not the signer', () => {
      const other = new Uint8Array(32).fill(0x22);
      expect(verdict(tx(signWith(other)))).to.equal('sig-invalid: signature 0: the P256 key does not match the signer');
      // The same entry is valid for the signer its key hashes to.
      const otherSigner = addressOf(p256.getPublicKey(other, false));
      expect(verdict(withExplicitEntry(2, otherSigner, signWith(other)(MSG)))).to.equal('accepted');
      expect(verdict(withExplicitEntry(2, signer, signWith(other)(MSG)))).to.equal(
        'sig-invalid: signature 0: the P256 key does not match the signer',
      );
    });

    it("refuses r or s of 0 or n by the signer's own key", () => {
      const altered = (r: (r: bigint) => bigint, s: (s: bigint) => bigint) => (digest: string) => {
        const valid = getBytes(sign(digest));
        return concat([word(r(BigInt(dataSlice(valid, 0, 32)))), word(s(BigInt(dataSlice(valid, 32, 64)))), valid.subarray(64)]);
      };
      const keep = (v: bigint) => v;
      for (const [label, signature] of [
        ['r = 0', altered(() => 0n, keep)],
        ['r = n', altered(() => N, keep)],
        ['s = 0', altered(keep, () => 0n)],
      ] as const) {
        expect(verdict(tx(signature)), label).to.equal('sig-invalid: signature 0: r or s out of range (s must be low)');
      }
    });

    it('refuses the high-s twin of a valid entry', () => {
      const twin = (digest: string) => {
        const valid = getBytes(sign(digest));
        return concat([valid.subarray(0, 32), word(N - BigInt(dataSlice(valid, 32, 64))), valid.subarray(64)]);
      };
      expect(verdict(tx(twin))).to.equal('sig-invalid: signature 0: r or s out of range (s must be low)');
    });

    it('takes s = n/2 and refuses s = n/2 + 1', () => {
      const r = BigInt(dataSlice(sign(MSG), 0, 32));
      const entry = (s: bigint) => {
        const key = new p256.Signature(r, s).addRecoveryBit(0).recoverPublicKey(getBytes(MSG)).toBytes(false);
        return withExplicitEntry(2, addressOf(key), concat([word(r), word(s), key.subarray(1)]));
      };
      expect(verdict(entry(N >> 1n))).to.equal('accepted');
      expect(verdict(entry((N >> 1n) + 1n))).to.equal('sig-invalid: signature 0: r or s out of range (s must be low)');
    });

    // Verification reads r, s, qx, qy from the first 128 bytes and ignores any more: only the
    // length rule refuses the valid entry with a byte appended.
    it('takes exactly 128 bytes: 127 and 129 are refused', () => {
      const sized = (edit: (valid: string) => string) =>
        transferFrameTx({ sender: signer, to: OTHER, value: 1n, scheme: 2, sign: (d) => edit(sign(d)) }).raw;
      expect(checked(sized((valid) => valid))).to.equal('accepted');
      expect(checked(sized((valid) => dataSlice(valid, 0, 127)))).to.equal(
        'sig-invalid: signature 0: P256 signatures are 128 bytes, not 127',
      );
      expect(checked(sized((valid) => concat([valid, '0x00'])))).to.equal(
        'sig-invalid: signature 0: P256 signatures are 128 bytes, not 129',
      );
    });
  });
});
