import { expect } from 'chai';
import { checkFrameTransaction } from '../../../plugins/gate/frame-checks.js';
import { decodeFrameTransaction } from '../../../plugins/gate/frame-codec.js';
import { encodeFrameTx, type FrameTxFields } from '../../helpers/frames.js';
import { refusalOf } from './frame-codec.test.js';

const LIMITS = { chainId: 8141n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n };
const SENDER = '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf';
const OTHER = '0x0000000000000000000000000000000000001234';
const SPONSOR = '0x000000000000000000000000000000000000beef';
const SIG65 = '0x00' + '11'.repeat(64);

const transfer = (): FrameTxFields => ({
  sender: SENDER,
  frames: [
    { mode: 1, flags: 3, executionGas: 50_000n },
    { mode: 2, flags: 0, target: OTHER, executionGas: 50_000n, value: 1n },
  ],
  signatures: [{ scheme: 1, signature: SIG65 }],
  fees: [1_000_000_000n, 2_000_000_000n, 0n],
});

const check = (fields: FrameTxFields) => checkFrameTransaction(decodeFrameTransaction(encodeFrameTx(fields)), LIMITS);
const reasonOf = (mutate: (f: FrameTxFields) => void) => {
  const fields = transfer();
  mutate(fields);
  return refusalOf(() => check(fields));
};

describe('gate: frame static checks', () => {
  it('computes V3\'s gas figures: max_gas 122 790, payer the sender', () => {
    const v3 = '0x06f89b821fcd80947e5f4552091a69125d5dfcb7b8c2659029395bdfeaca010380c482c350808080de0280940000000000000000000000000000000000001234c482c350800180f848f846018080b841017a3519e066ec20068a5d05b0e66a1e17b29b98ae20535c8241dc09aa3a60f44a06cc4a99b41141d0be281cc1a0573c2c4dad116c7e67d98c3fa38c141c48fea8cb843b9aca00847735940080c0';
    const facts = checkFrameTransaction(decodeFrameTransaction(v3), LIMITS);
    expect(facts).to.deep.equal({ payer: SENDER, maxGas: 122_790n, maxCost: 122_790n * 2_000_000_000n, deadline: undefined, prefixEnd: 0, prefixGas: 52_800n });
  });

  it('names the sponsor as payer for an [only, pay] prefix', () => {
    const fields = transfer();
    fields.frames = [
      { mode: 1, flags: 2, executionGas: 30_000n },
      { mode: 1, flags: 1, target: SPONSOR, executionGas: 30_000n },
      { mode: 2, flags: 0, target: OTHER, executionGas: 50_000n },
    ];
    expect(check(fields).payer).to.equal(SPONSOR);
  });

  it('accepts [deploy, self] and an expiry frame at index 0', () => {
    const fields = transfer();
    fields.frames.unshift({ mode: 0, flags: 0, executionGas: 20_000n, data: '0x6000' });
    fields.frames.unshift({ mode: 1, flags: 0, target: '0x0000000000000000000000000000000000008141', executionGas: 5_000n, data: '0x00000000ffffffff' });
    expect(check(fields).deadline).to.equal(0xffffffffn);
  });

  const cases: Array<[string, string, (f: FrameTxFields) => void]> = [
    ['another chain id', 'wrong-chain-id', (f) => (f.chainId = 1n)],
    ['blob hashes', 'blob-not-supported', (f) => (f.blobHashes = ['0x' + '01'.repeat(32)])],
    ['a blob fee', 'blob-not-supported', (f) => (f.fees = [0n, 1n, 1n])],
    ['a tip above the fee cap', 'fee-order', (f) => (f.fees = [3n, 2n, 0n])],
    ['an unknown mode', 'frame-invalid', (f) => (f.frames[1]!.mode = 3)],
    ['flags above bit 2', 'frame-invalid', (f) => (f.frames[1]!.flags = 8)],
    ['value outside a SENDER frame', 'frame-invalid', (f) => (f.frames[0]!.value = 1n)],
    ['an execution grant aimed elsewhere', 'frame-invalid', (f) => (f.frames[0]!.target = OTHER)],
    ['an atomic last frame', 'frame-invalid', (f) => (f.frames[1]!.flags = 4)],
    ['an atomic VERIFY frame', 'frame-invalid', (f) => (f.frames[0]!.flags = 7)],
    ['a misplaced expiry frame', 'expiry-invalid', (f) => f.frames.push({ mode: 1, flags: 0, target: '0x0000000000000000000000000000000000008141', executionGas: 1n, data: '0x0000000000000001' })],
    ['an expiry frame with 4 bytes', 'expiry-invalid', (f) => f.frames.unshift({ mode: 1, flags: 0, target: '0x0000000000000000000000000000000000008141', executionGas: 1n, data: '0x00000001' })],
    ['an unknown signature scheme', 'sig-scheme-unknown', (f) => (f.signatures[0]!.scheme = 0x44)],
    ['an ARBITRARY entry naming a signer', 'sig-invalid', (f) => (f.signatures[0] = { scheme: 0, signer: OTHER, signature: '0x01' })],
    ['an all-zero msg', 'sig-invalid', (f) => (f.signatures[0]!.msg = '0x' + '00'.repeat(32))],
    ['a short SECP256K1 signature', 'sig-invalid', (f) => (f.signatures[0]!.signature = '0x' + '11'.repeat(64))],
    ['a short ML-DSA-65 entry', 'mldsa-length', (f) => (f.signatures[0] = { scheme: 0x65, signature: '0x' + '11'.repeat(5260) })],
    ['execution gas over the transaction cap', 'gas-cap', (f) => (f.frames[1]!.executionGas = 16_777_216n)],
    ['no validation prefix', 'prefix-shape', (f) => f.frames.reverse()],
    ['a VERIFY frame after the payment grant', 'prefix-shape', (f) => f.frames.push({ mode: 1, flags: 0, target: OTHER, executionGas: 1n })],
    ['a prefix over the gas budget', 'prefix-gas', (f) => (f.frames[0]!.executionGas = 97_201n)],
    ['a prefix over the state-gas budget', 'prefix-gas', (f) => (f.frames[0]!.stateGas = 500_001n)],
  ];
  for (const [label, reason, mutate] of cases) {
    it(`refuses ${label} with ${reason}`, () => {
      expect(reasonOf(mutate)).to.equal(reason);
    });
  }

  it('accepts a prefix exactly at the gas budget', () => {
    expect(reasonOf((f) => (f.frames[0]!.executionGas = 97_200n))).to.equal('accepted');
  });
});
