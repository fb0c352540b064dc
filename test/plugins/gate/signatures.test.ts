import { p256 } from '@noble/curves/nist.js';
import { expect } from 'chai';
import { concat, getBytes, keccak256, SigningKey, Transaction, Wallet } from 'ethers';
import { readFileSync } from 'node:fs';
import { decodeFrameTransaction } from '../../../plugins/gate/frame-codec.js';
import { Refusal } from '../../../plugins/gate/refusal.js';
import { recoverAddress, verifyFrameSignatures } from '../../../plugins/gate/signatures.js';
import { encodeFrameTx, frameSigHash, mldsaEntry, mldsaKeys, secp256k1Entry, transferFrameTx, type FrameTxFields } from '../../helpers/frames.js';

const VECTOR = JSON.parse(readFileSync('test/plugins/gate/mldsa65-vector.json', 'utf8')) as {
  seed: string; publicKey: string; sender: string; sigHash: string; hash: string; raw: string;
};
const OTHER = '0x0000000000000000000000000000000000001234';

function verdict(raw: string): string {
  try {
    verifyFrameSignatures(decodeFrameTransaction(raw));
    return 'verified';
  } catch (err) {
    if (err instanceof Refusal) return err.message;
    throw err;
  }
}

/** Flips one bit of the byte at `offset` from the end of the raw transaction's signature data. */
function tamper(raw: string, offsetFromEnd: number): string {
  const bytes = getBytes(raw);
  const at = bytes.length - offsetFromEnd;
  bytes[at] = bytes[at]! ^ 0x01;
  return '0x' + Buffer.from(bytes).toString('hex');
}

describe('gate: signatures', () => {
  it('recovers senders with native secp256k1 exactly as ethers does', async () => {
    const wallet = Wallet.createRandom();
    const tx = Transaction.from(await wallet.signTransaction({ chainId: 8141, to: OTHER, gasLimit: 21_000, maxFeePerGas: 1n, type: 2 }));
    const sig = tx.signature!;
    expect(recoverAddress(getBytes(tx.unsignedHash), getBytes(sig.r), getBytes(sig.s), sig.yParity)).to.equal(wallet.address.toLowerCase());
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
      expect(verdict(VECTOR.raw)).to.equal('verified');
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
      const { raw } = transferFrameTx({ sender: keys.address, to: OTHER, value: 1n, scheme: 0x65, sign: () => mldsaEntry(keys, keccak256('0x01')) });
      expect(verdict(raw)).to.match(/^mldsa-verify-failed: signature 0/);
    });
  });

  describe('SECP256K1 (scheme 0x01)', () => {
    const key = new SigningKey('0x' + '01'.repeat(32));
    const sender = '0x' + keccak256('0x' + key.publicKey.slice(4)).slice(26);

    it('verifies an entry over the signature hash', () => {
      const { raw } = transferFrameTx({ sender, to: OTHER, value: 1n, scheme: 1, sign: (d) => secp256k1Entry(key.privateKey, d) });
      expect(verdict(raw)).to.equal('verified');
    });

    it('refuses an entry by another key', () => {
      const { raw } = transferFrameTx({ sender, to: OTHER, value: 1n, scheme: 1, sign: (d) => secp256k1Entry('0x' + '02'.repeat(32), d) });
      expect(verdict(raw)).to.equal('sig-invalid: signature 0: the SECP256K1 signature does not recover the signer');
    });

    it('refuses a high-s signature', () => {
      const { raw } = transferFrameTx({
        sender, to: OTHER, value: 1n, scheme: 1,
        sign: () => concat(['0x00', '0x' + '11'.repeat(32), '0x' + 'ff'.repeat(32)]),
      });
      expect(verdict(raw)).to.equal('sig-invalid: signature 0: r or s out of range (s must be low)');
    });
  });

  describe('P256 (scheme 0x02)', () => {
    const secret = p256.utils.randomSecretKey();
    const publicKey = p256.getPublicKey(secret, false);
    const signer = '0x' + keccak256(publicKey.subarray(1)).slice(26);
    const sign = (digest: string) =>
      concat([p256.sign(getBytes(digest), secret, { prehash: false, lowS: true }), publicKey.subarray(1)]);
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
      expect(verdict(tx(sign))).to.equal('verified');
    });

    it('refuses a signature over another digest', () => {
      expect(verdict(tx(() => sign(keccak256('0x02'))))).to.equal('sig-invalid: signature 0: the P256 signature does not verify');
    });
  });
});
