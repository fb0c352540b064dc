import { expect } from 'chai';
import { checkStaticValidity, frameGas } from '../../protocol/frame-checks.js';
import { decodeFrameTransaction } from '../../protocol/frame-codec.js';
import { encodeFrameTx, type FrameTxFields } from '../../support/frames.js';
import { verdictOf } from '../helpers/refusals.js';
import { CAP, EXPIRY, expiry, OTHER, send, SENDER, SIG65, SPONSOR, transfer } from './frame-fields.js';

const check = (fields: FrameTxFields) => checkStaticValidity(decodeFrameTransaction(encodeFrameTx(fields)), 8141n);
const verdict = (mutate: (f: FrameTxFields) => void) => {
  const fields = transfer();
  mutate(fields);
  return verdictOf(() => check(fields));
};

describe("protocol: EIP-8141's static validity (what makes a frame transaction invalid in any block)", () => {
  const cases: Array<[string, string, string, (f: FrameTxFields) => void]> = [
    ['another chain id', 'wrong-chain-id', 'chain id 1 is not 8141', (f) => (f.chainId = 1n)],
    [
      'blob hashes',
      'blob-not-supported',
      'frame transactions on this chain carry no blobs',
      (f) => (f.blobHashes = [`0x${'01'.repeat(32)}`]),
    ],
    ['a blob fee', 'blob-not-supported', 'frame transactions on this chain carry no blobs', (f) => (f.fees = [0n, 1n, 1n])],
    ['a tip above the fee cap', 'fee-order', 'max_priority_fee_per_gas exceeds max_fee_per_gas', (f) => (f.fees = [3n, 2n, 0n])],
    ['an empty sender', 'rlp-invalid', 'sender must be 20 bytes', (f) => (f.sender = '0x')],
    ['no frames', 'rlp-invalid', 'a frame transaction carries 1 to 64 frames, not 0', (f) => (f.frames = [])],
    [
      '65 frames',
      'rlp-invalid',
      'a frame transaction carries 1 to 64 frames, not 65',
      (f) => f.frames.push(...Array.from({ length: 63 }, () => send(0))),
    ],
    ['an unknown mode', 'frame-invalid', 'frame 1: unknown mode 3', (f) => (f.frames[1] = { ...send(0), mode: 3 })],
    ['flags above bit 2', 'frame-invalid', 'frame 1: flags above bit 2 must be zero', (f) => (f.frames[1]!.flags = 8)],
    ['value outside a SENDER frame', 'frame-invalid', 'frame 0: only SENDER frames may carry value', (f) => (f.frames[0]!.value = 1n)],
    [
      'an execution grant aimed elsewhere',
      'frame-invalid',
      'frame 0: a frame that may grant execution must target the sender',
      (f) => (f.frames[0]!.target = OTHER),
    ],
    ['an atomic last frame', 'frame-invalid', 'frame 1: the last frame cannot be atomic', (f) => (f.frames[1]!.flags = 4)],
    ['an atomic VERIFY frame', 'frame-invalid', 'frame 0: a VERIFY frame cannot be atomic', (f) => (f.frames[0]!.flags = 7)],
    [
      'an atomic deploy frame before its VERIFY frame',
      'frame-invalid',
      'frame 0: an atomic frame cannot precede a VERIFY frame',
      (f) => f.frames.unshift({ mode: 0, flags: 4, executionGas: 20_000n, data: '0x6000' }),
    ],
    [
      'approval bits on an atomic frame',
      'frame-invalid',
      'frame 1: frames inside an atomic batch carry no approval bits',
      (f) => f.frames.splice(1, 0, send(5)),
    ],
    [
      'approval bits on the frame that ends a batch',
      'frame-invalid',
      'frame 2: frames inside an atomic batch carry no approval bits',
      (f) => f.frames.splice(1, 0, send(4), send(1)),
    ],
    // The sum of execution and state gas, not each limit, must fit 64 bits: 2^64 here.
    [
      'frame gas summing to 2^64',
      'frame-invalid',
      'frame 1: total gas overflows 64 bits',
      (f) => (f.frames[1]!.stateGas = 2n ** 64n - 100_000n),
    ],
    [
      'an expiry frame with 4 bytes',
      'expiry-invalid',
      'frame 0: the expiry frame carries exactly 8 bytes of deadline',
      (f) => f.frames.unshift(expiry({ data: '0x00000001' })),
    ],
    [
      'an expiry frame with flags',
      'expiry-invalid',
      'frame 0: the expiry frame has flags, value and state gas 0',
      (f) => f.frames.unshift(expiry({ flags: 1 })),
    ],
    [
      'an expiry frame with state gas',
      'expiry-invalid',
      'frame 0: the expiry frame has flags, value and state gas 0',
      (f) => f.frames.unshift(expiry({ stateGas: 1n })),
    ],
    // The VERIFY-frame value rule answers first, so the expiry rule's own value clause never decides.
    [
      'an expiry frame with value',
      'frame-invalid',
      'frame 0: only SENDER frames may carry value',
      (f) => f.frames.unshift(expiry({ value: 1n })),
    ],
    ['an unknown signature scheme', 'sig-scheme-unknown', 'signature 0: unknown scheme 0x44', (f) => (f.signatures[0]!.scheme = 0x44)],
    [
      'an ARBITRARY entry naming a signer',
      'sig-invalid',
      'signature 0: ARBITRARY entries name no signer',
      (f) => (f.signatures[0] = { scheme: 0, signer: OTHER, signature: '0x01' }),
    ],
    [
      'an all-zero msg',
      'sig-invalid',
      'signature 0: msg must be empty or a non-zero 32-byte digest',
      (f) => (f.signatures[0]!.msg = `0x${'00'.repeat(32)}`),
    ],
    [
      'a 31-byte msg',
      'sig-invalid',
      'signature 0: msg must be empty or a non-zero 32-byte digest',
      (f) => (f.signatures[0]!.msg = `0x${'00'.repeat(30)}01`),
    ],
    [
      'a 33-byte msg',
      'sig-invalid',
      'signature 0: msg must be empty or a non-zero 32-byte digest',
      (f) => (f.signatures[0]!.msg = `0x${'00'.repeat(32)}01`),
    ],
    [
      'a short SECP256K1 signature',
      'sig-invalid',
      'signature 0: SECP256K1 signatures are 65 bytes, not 64',
      (f) => (f.signatures[0]!.signature = `0x${'11'.repeat(64)}`),
    ],
    [
      'a short ML-DSA-65 entry',
      'mldsa-length',
      'signature 0: MLDSA65 signatures are 5261 bytes, not 5260',
      (f) => (f.signatures[0] = { scheme: 0x65, signature: `0x${'11'.repeat(5260)}` }),
    ],
    [
      'execution gas over the transaction cap',
      'gas-cap',
      'intrinsic plus execution gas 16849994 exceeds 16777216',
      (f) => (f.frames[1]!.executionGas = 16_777_216n),
    ],
    ['two expiry frames', 'expiry-invalid', 'frame 1: at most one expiry frame', (f) => f.frames.unshift(expiry(), expiry())],
  ];
  for (const [label, reason, detail, mutate] of cases) {
    it(`refuses ${label} with ${reason}`, () => {
      expect(verdict(mutate)).to.equal(`${reason}: ${detail}`);
    });
  }

  const accepted: Array<[string, (f: FrameTxFields) => void]> = [
    ['a tip equal to the fee cap', (f) => (f.fees = [2n, 2n, 0n])],
    ["a SENDER frame to the expiry verifier's address (no expiry frame)", (f) => f.frames.push(send(0, { target: EXPIRY }))],
    ['a SECP256K1 entry naming its signer', (f) => (f.signatures[0]!.signer = SENDER)],
    ['a self VERIFY frame naming the sender as its target', (f) => (f.frames[0]!.target = SENDER)],
    ['64 frames', (f) => f.frames.push(...Array.from({ length: 62 }, () => send(0)))],
    ['a single frame', (f) => f.frames.pop()],
    ['frame gas summing to 2^64 - 1', (f) => (f.frames[1]!.stateGas = 2n ** 64n - 1n - 100_000n)],
    ['a 32-byte msg that is not all zeros', (f) => (f.signatures[0]!.msg = `0x${'00'.repeat(31)}01`)],
    // Two batches back to back, then a frame with approval bits once the second has ended.
    [
      'atomic batches of SENDER and DEFAULT frames',
      (f) => f.frames.push(send(4), send(0), { ...send(4), mode: 0 }, send(4), send(0), send(1)),
    ],
  ];
  for (const [label, mutate] of accepted) {
    it(`accepts ${label}`, () => {
      expect(verdict(mutate)).to.equal('accepted');
    });
  }

  describe('intrinsic and maximum gas (section 9)', () => {
    const gasOf = (mutate: (f: FrameTxFields) => void) => {
      const fields = transfer();
      mutate(fields);
      return frameGas(decodeFrameTransaction(encodeFrameTx(fields)));
    };

    it('charges 6 000 for a value transfer to another account, none to the sender or without value', () => {
      const toOther = gasOf(() => {});
      const toSender = gasOf((f) => (f.frames[1]!.target = SENDER));
      const noValue = gasOf((f) => (f.frames[1]!.value = 0n));
      const toImplicitSender = gasOf((f) => (f.frames[1]!.target = undefined));
      expect(toImplicitSender.intrinsic).to.equal(toSender.intrinsic);
      // Targets and values are not calldata here: only the transfer cost differs.
      expect(toOther.intrinsic - toSender.intrinsic).to.equal(6_000n);
      expect(toOther.intrinsic - noValue.intrinsic).to.equal(6_000n);
    });

    it("counts an entry's signer as calldata: 20 non-zero bytes, 320 gas", () => {
      expect(gasOf((f) => (f.signatures[0]!.signer = SENDER)).intrinsic - gasOf(() => {}).intrinsic).to.equal(320n);
    });

    it('adds state gas to max_gas, above execution, and leaves it out of the capped figure', () => {
      const gas = gasOf((f) => (f.frames[1]!.stateGas = 100_000n));
      expect(gas.maxGas).to.equal(gas.intrinsic + 100_000n + 100_000n);
      expect(gas.capped).to.equal(gas.intrinsic + 100_000n);
    });
  });

  describe('the calldata floor (section 9)', () => {
    /**
     * Four frames, a SECP256K1 and an ARBITRARY entry: floor = 12 000 + 4 x 475 + 2 800 + 100
     * + 2 x 6 000 + 64 x bytes = 28 800 + 64 x bytes, exactly the cap at 261 694 bytes, of which
     * the entries carry 66. Zero bytes cost 4 gas of intrinsic gas but 64 of floor.
     */
    const floorBound = (dataBytes: number): FrameTxFields => ({
      sender: SENDER,
      frames: [
        { mode: 1, flags: 3, executionGas: 50_000n },
        send(0, { value: 1n, executionGas: 50_000n }),
        send(0, { value: 1n, executionGas: 50_000n, target: SPONSOR }),
        send(0, { executionGas: 50_000n, data: `0x${'00'.repeat(dataBytes)}` }),
      ],
      signatures: [
        { scheme: 1, signature: SIG65 },
        { scheme: 0, signature: '0x01' },
      ],
      fees: [1_000_000_000n, 2_000_000_000n, 0n],
    });
    const atCap = floorBound(261_628);
    const overCap = floorBound(261_629);

    it('accepts a transaction whose calldata floor is exactly the cap, and prices it at the floor', () => {
      const tx = decodeFrameTransaction(encodeFrameTx(atCap));
      // intrinsic = 28 800 + 4 x (257 + 4 + 261 628 tokens): far below the cap with 200 000 execution gas.
      expect(frameGas(tx)).to.deep.equal({ intrinsic: 1_076_356n, calldataFloor: CAP, capped: CAP, maxGas: CAP });
      expect(checkStaticValidity(tx, 8141n).gas).to.include({ maxGas: CAP });
    });

    it('adds state gas on top of a binding floor in max_gas, not in the capped figure', () => {
      const fields = floorBound(261_628);
      fields.frames[3]!.stateGas = 1_000n;
      expect(frameGas(decodeFrameTransaction(encodeFrameTx(fields)))).to.include({ calldataFloor: CAP, capped: CAP, maxGas: CAP + 1_000n });
      // State gas above half the gap between floor and intrinsic plus execution: max_gas is still floor + state.
      fields.frames[3]!.stateGas = 8_000_000n;
      expect(frameGas(decodeFrameTransaction(encodeFrameTx(fields)))).to.include({
        calldataFloor: CAP,
        capped: CAP,
        maxGas: CAP + 8_000_000n,
      });
    });

    it('refuses with gas-cap a transaction one byte over the floor whose intrinsic and execution gas fit', () => {
      const tx = decodeFrameTransaction(encodeFrameTx(overCap));
      expect(frameGas(tx).intrinsic + 200_000n < CAP).to.equal(true);
      expect(verdictOf(() => checkStaticValidity(tx, 8141n))).to.equal(`gas-cap: intrinsic plus execution gas ${CAP + 64n} exceeds ${CAP}`);
    });
  });
});
