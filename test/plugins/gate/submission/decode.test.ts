import { expect } from 'chai';
import { getBytes, keccak256, Transaction, type TransactionLike } from 'ethers';
import { Secp256k1, TxEnvelopeEip1559, TxEnvelopeEip8141 } from 'ox';
import { decodeSubmission, type DecodeLimits, type Submission } from '../../../../plugins/gate/submission/decode.js';
import { readRawTransaction } from '../../../../plugins/gate/submission/raw-transaction.js';
import { RECIPIENT, secp256k1Entry, signed, type FrameTxFields } from '../../../../support/frames.js';
import { walletFor } from '../../../../support/keys.js';
import { verdictOf } from '../../../helpers/refusals.js';

/** Spec section 1 network parameters, and frame-transactions.md's prefix budgets. */
const LIMITS: DecodeLimits = { chainId: 8141n, blockGasLimit: 60_000_000n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n };
const GWEI = 1_000_000_000n;

/** frame-transactions.md section 10. */
const V1 = '0x06e70180941111111111111111111111111111111111111111c9c8808080c280808080c0c3808080c0';
const V3 =
  '0x06f89b821fcd80947e5f4552091a69125d5dfcb7b8c2659029395bdfeaca010380c482c350808080de0280940000000000000000000000000000000000001234c482c350800180f848f846018080b841017a3519e066ec20068a5d05b0e66a1e17b29b98ae20535c8241dc09aa3a60f44a06cc4a99b41141d0be281cc1a0573c2c4dad116c7e67d98c3fa38c141c48fea8cb843b9aca00847735940080c0';
const V3_KEY = `0x${'00'.repeat(31)}01`;
const V3_SENDER = '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf';
/** V3's fields, signed here by key 1 (RFC 6979, so the same bytes). */
const v3Fields = (): FrameTxFields => ({
  nonce: 0n,
  sender: V3_SENDER,
  frames: [
    { mode: 1, flags: 3, executionGas: 50_000n },
    { mode: 2, flags: 0, target: '0x0000000000000000000000000000000000001234', executionGas: 50_000n, value: 1n },
  ],
  signatures: [{ scheme: 1 }],
  fees: [GWEI, 2n * GWEI, 0n],
});

const decode = (raw: string, limits: DecodeLimits = LIMITS): Submission => decodeSubmission(readRawTransaction([raw]), limits);
/** The refusal as a client reads it (`reason: detail`), or 'accepted'. */
const verdict = (raw: string, limits: DecodeLimits = LIMITS) => verdictOf(() => decode(raw, limits));

/** Scheme verification gas, frame-transactions.md section 4. */
const SCHEME_GAS = new Map([
  [0x00, 100n],
  [0x01, 2_800n],
  [0x02, 6_700n],
  [0x65, 9_000n],
]);

/** max_gas of frame-transactions.md section 9, from the fields alone. */
function maxGasBySpec(tx: FrameTxFields): bigint {
  let zero = 0n;
  let nonZero = 0n;
  const count = (hex: string | undefined) => {
    for (const b of getBytes(hex ?? '0x')) b === 0 ? zero++ : nonZero++;
  };
  for (const f of tx.frames) count(f.data);
  for (const s of tx.signatures) [s.signer, s.msg, s.signature].forEach(count);
  const schemeGas = tx.signatures.reduce((sum, s) => sum + SCHEME_GAS.get(s.scheme)!, 0n);
  const valueCost =
    6_000n * BigInt(tx.frames.filter((f) => (f.value ?? 0n) > 0n && f.target !== undefined && f.target !== tx.sender).length);
  const fixed = 12_000n + 475n * BigInt(tx.frames.length) + schemeGas + valueCost;
  const intrinsic = fixed + 4n * (zero + 4n * nonZero);
  const floor = fixed + 64n * (zero + nonZero);
  const execution = tx.frames.reduce((sum, f) => sum + f.executionGas, 0n);
  const state = tx.frames.reduce((sum, f) => sum + (f.stateGas ?? 0n), 0n);
  return intrinsic + execution > floor ? intrinsic + execution + state : floor + state;
}

/** What admission reads of a submission (the frame part aside). */
const summary = (sub: Submission) => ({
  hash: sub.hash,
  type: sub.type,
  nonce: sub.nonce,
  sender: sub.sender,
  payer: sub.payer,
  maxFeePerGas: sub.maxFeePerGas,
  maxCost: sub.maxCost,
  frame: sub.frame !== undefined,
});

describe('gate: decoding a submission (frame-transactions.md section 2)', () => {
  const wallet = walletFor('gate: decode');
  const sender = wallet.address.toLowerCase();
  const sign = (tx: TransactionLike) =>
    wallet.signTransaction({ chainId: 8141, nonce: 9, to: RECIPIENT, value: 3n, gasLimit: 21_000, ...tx });

  describe('dispatch on the first byte', () => {
    it('takes legacy (0xc0-0xff, EIP-155), 0x01, 0x02 and 0x04 through the standard decoder, reading them as ethers does', async () => {
      const authorization = await wallet.authorize({ address: RECIPIENT, nonce: 10, chainId: 8141 });
      const samples: Array<[number, TransactionLike]> = [
        [0, { type: 0, gasPrice: 3n * GWEI }],
        [1, { type: 1, gasPrice: 4n * GWEI, accessList: [] }],
        [2, { type: 2, maxFeePerGas: 5n * GWEI, maxPriorityFeePerGas: 0n }],
        [4, { type: 4, maxFeePerGas: 6n * GWEI, maxPriorityFeePerGas: 0n, gasLimit: 50_000, authorizationList: [authorization] }],
      ];
      for (const [type, fields] of samples) {
        const raw = await sign(fields);
        const tx = Transaction.from(raw);
        const fee = tx.maxFeePerGas ?? tx.gasPrice!;
        expect(summary(decode(raw)), `type ${type}`).to.deep.equal({
          hash: tx.hash,
          type,
          nonce: 9n,
          sender: tx.from!.toLowerCase(),
          payer: tx.from!.toLowerCase(),
          maxFeePerGas: fee,
          maxCost: tx.gasLimit * fee + 3n,
          frame: false,
        });
        expect(getBytes(raw)[0]! >= 0xc0, `type ${type}: first byte`).to.equal(type === 0);
      }
    });

    it('takes 0x06 through the frame decoder: V3 as ox reads it, the sender from the payload, never recovered', () => {
      const sub = decode(V3);
      const ox = TxEnvelopeEip8141.deserialize(V3 as TxEnvelopeEip8141.Serialized);
      expect(sub.frame).to.not.equal(undefined);
      expect({ hash: sub.hash, type: sub.type, nonce: sub.nonce, sender: sub.sender, maxFeePerGas: sub.maxFeePerGas }).to.deep.equal({
        hash: TxEnvelopeEip8141.hash(ox),
        type: 6,
        nonce: ox.nonce,
        sender: ox.sender.toLowerCase(),
        maxFeePerGas: ox.maxFeePerGas,
      });
      expect(sub.hash).to.equal('0x2cafa024dc5d102fd3a2764a6b5f65bfc52e4547ffce235b78229ff711a0de85');
    });

    it('refuses type 0x03 as blob-not-supported, whatever follows the type byte', () => {
      for (const raw of ['0x03', '0x03c0', `0x03${V3.slice(4)}`]) {
        expect(verdict(raw), raw).to.equal(
          'blob-not-supported: blob transactions (type 0x03) are not accepted: blob sidecars have no data-availability path',
        );
      }
    });

    for (const type of [0x00, 0x05, 0x07, 0x08, 0x7f, 0x80, 0xbf]) {
      const byte = type.toString(16).padStart(2, '0');
      it(`refuses type 0x${byte} as type-unsupported, naming it`, () => {
        expect(verdict(`0x${byte}c0`)).to.equal(`type-unsupported: transaction type 0x${byte} is not supported`);
      });
    }
  });

  describe('the limits a standard transaction is held to (protocol/standard-checks.ts)', () => {
    it('applies them before its sender is recovered: another chain id, for typed and legacy transactions alike', async () => {
      expect(verdict(await sign({ type: 2, chainId: 1, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n }))).to.equal(
        'wrong-chain-id: chain id 1 is not 8141',
      );
      expect(verdict(await sign({ type: 0, chainId: 1, gasPrice: GWEI }))).to.equal('wrong-chain-id: chain id 1 is not 8141');
    });

    it('reads the chain id from the limits it is given', async () => {
      const raw = await sign({ type: 2, chainId: 1, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
      expect(decode(raw, { ...LIMITS, chainId: 1n }).sender).to.equal(sender);
    });
  });

  describe('the limits a frame transaction is held to, and who pays', () => {
    it('signs V3 from its fields, and section 9 prices it at max_gas 122 790 (the oracle for what follows)', () => {
      const fields = v3Fields();
      expect(signed(fields, [(digest) => secp256k1Entry(V3_KEY, digest)])).to.equal(V3);
      expect(maxGasBySpec(fields)).to.equal(122_790n);
    });

    it('refuses V1, a transaction for chain 1 (wrong-chain-id)', () => {
      expect(verdict(V1)).to.equal('wrong-chain-id: chain id 1 is not 8141');
    });

    it('takes execution gas equal to the block gas limit and refuses one over it (gas-limit)', () => {
      expect(verdict(V3, { ...LIMITS, blockGasLimit: 122_790n })).to.equal('accepted');
      expect(verdict(V3, { ...LIMITS, blockGasLimit: 122_789n })).to.equal(
        'gas-limit: execution gas 122790 exceeds the block gas limit 122789',
      );
    });

    it('reserves the two gas dimensions each on its own (EIP-8141 block accounting): their sum may pass the limit', () => {
      const withStateGas = (stateGas: bigint) => {
        const fields = v3Fields();
        fields.frames[0]!.stateGas = stateGas;
        const raw = signed(fields, [(digest) => secp256k1Entry(V3_KEY, digest)]);
        return { raw, execution: decode(raw).frame!.facts.executionReservation };
      };
      const small = withStateGas(100_000n);
      expect(verdict(small.raw, { ...LIMITS, blockGasLimit: small.execution })).to.equal('accepted');
      expect(verdict(small.raw, { ...LIMITS, blockGasLimit: small.execution - 1n })).to.equal(
        `gas-limit: execution gas ${small.execution} exceeds the block gas limit ${small.execution - 1n}`,
      );
      const large = withStateGas(200_000n);
      expect(verdict(large.raw, { ...LIMITS, blockGasLimit: large.execution })).to.equal(
        `gas-limit: state gas 200000 exceeds the block gas limit ${large.execution}`,
      );
    });

    it("applies the prefix gas budget it is given (V3's prefix needs 52 800)", () => {
      expect(verdict(V3, { ...LIMITS, prefixGasBudget: 52_800n })).to.equal('accepted');
      expect(verdict(V3, { ...LIMITS, prefixGasBudget: 52_799n })).to.equal(
        'prefix-gas: validation prefix needs 52800 gas, over the budget of 52799',
      );
    });

    it('charges a sender who pays max_gas × max_fee, not the value its frames send (APPROVE collects max_cost alone)', () => {
      expect(summary(decode(V3))).to.deep.equal({
        hash: keccak256(V3),
        type: 6,
        nonce: 0n,
        sender: V3_SENDER,
        payer: V3_SENDER,
        maxFeePerGas: 2n * GWEI,
        maxCost: 122_790n * 2n * GWEI,
        frame: true,
      });
      const fields = v3Fields();
      fields.frames.push({ mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 2n });
      const raw = signed(fields, [(digest) => secp256k1Entry(V3_KEY, digest)]);
      expect(decode(raw).maxCost).to.equal(maxGasBySpec(fields) * 2n * GWEI);
    });

    it('refuses a nonce of 2^64 - 1 in either kind (EIP-2681: it cannot be incremented), takes 2^64 - 2', () => {
      const fields = v3Fields();
      fields.nonce = (1n << 64n) - 1n;
      expect(verdict(signed(fields, [(digest) => secp256k1Entry(V3_KEY, digest)]), LIMITS)).to.equal(
        'nonce-max: nonce has max value: 18446744073709551615 cannot be incremented (EIP-2681)',
      );
      fields.nonce = (1n << 64n) - 2n;
      expect(verdict(signed(fields, [(digest) => secp256k1Entry(V3_KEY, digest)]), LIMITS)).to.equal('accepted');
      const standard = (nonce: bigint) => {
        const envelope = TxEnvelopeEip1559.from({ chainId: 8141, nonce, to: RECIPIENT, gas: 21_000n, maxFeePerGas: 2n * GWEI });
        const signature = Secp256k1.sign({ payload: TxEnvelopeEip1559.getSignPayload(envelope), privateKey: V3_KEY as `0x${string}` });
        return TxEnvelopeEip1559.serialize(envelope, { signature });
      };
      expect(verdict(standard((1n << 64n) - 1n))).to.equal(
        'nonce-max: nonce has max value: 18446744073709551615 cannot be incremented (EIP-2681)',
      );
      expect(verdict(standard((1n << 64n) - 2n))).to.equal('accepted');
    });

    it("names the pay frame's target as payer, charged max_gas × max_fee without the value the sender sends", () => {
      const sponsorKey = walletFor('gate: decode sponsor');
      const sponsor = sponsorKey.address.toLowerCase();
      const fields: FrameTxFields = {
        nonce: 4n,
        sender,
        frames: [
          { mode: 1, flags: 2, executionGas: 10_000n },
          { mode: 1, flags: 1, target: sponsor, executionGas: 10_000n },
          { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 5n },
        ],
        signatures: [{ scheme: 1 }, { scheme: 1, signer: sponsor }],
        fees: [0n, 3n * GWEI, 0n],
      };
      const raw = signed(fields, [(d) => secp256k1Entry(wallet.privateKey, d), (d) => secp256k1Entry(sponsorKey.privateKey, d)]);
      const ox = TxEnvelopeEip8141.deserialize(raw as TxEnvelopeEip8141.Serialized);
      expect(summary(decode(raw))).to.deep.equal({
        hash: TxEnvelopeEip8141.hash(ox),
        type: 6,
        nonce: ox.nonce,
        sender: ox.sender.toLowerCase(),
        payer: sponsor,
        maxFeePerGas: ox.maxFeePerGas,
        maxCost: maxGasBySpec(fields) * 3n * GWEI,
        frame: true,
      });
    });

    it('keeps the decoded transaction and its static facts for the later stages', () => {
      const sub = decode(V3);
      expect({
        frames: sub.frame!.tx.frames.length,
        prefixEnd: sub.frame!.facts.prefixEnd,
        maxGas: sub.frame!.facts.maxGas,
        raw: sub.raw.hex,
      }).to.deep.equal({
        frames: 2,
        prefixEnd: 0,
        maxGas: 122_790n,
        raw: V3,
      });
    });
  });
});
