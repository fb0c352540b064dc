import { expect } from 'chai';
import { Approvals } from '../../protocol/approval.js';
import { entryCharge, isExpiryFrame, runDefaultCode } from '../../protocol/defined-frames.js';
import { decodeFrameTransaction, type FrameTransaction } from '../../protocol/frame-codec.js';
import { encodeFrameTx, type FrameFields } from '../../support/frames.js';
import { EXPIRY, SENDER, SIG65, SPONSOR } from './frame-fields.js';

const expiryFrame: FrameFields = { mode: 1, flags: 0, target: EXPIRY, executionGas: 2_651n, data: '0x00000000ffffffff' };
const self: FrameFields = { mode: 1, flags: 3, executionGas: 10_000n };

const txOf = (frames: FrameFields[], signatures = [{ scheme: 1, signature: SIG65 }]): FrameTransaction =>
  decodeFrameTransaction(encodeFrameTx({ sender: SENDER, frames, signatures, fees: [0n, 1n, 0n] }));

describe("protocol: a protocol-defined frame's step (the runner's and direct evaluation's)", () => {
  describe('the entry charge', () => {
    it("charges the access it is given, plus the verifier's 51 for the expiry frame", () => {
      const tx = txOf([expiryFrame, self]);
      expect(entryCharge(0, tx.frames[0]!, 2_600n)).to.deep.equal({ ok: true, gas: 2_651n, expiry: true });
      expect(entryCharge(1, tx.frames[1]!, 100n)).to.deep.equal({ ok: true, gas: 100n, expiry: false });
    });

    it('halts a frame whose limit is below its charge as out of gas; takes a limit exactly at it', () => {
      const tx = txOf([{ ...expiryFrame, executionGas: 2_650n }, self]);
      expect(entryCharge(0, tx.frames[0]!, 2_600n)).to.deep.equal({
        ok: false,
        halt: true,
        cause: 'out of gas',
        detail: 'the frame needs 2651, its limit is 2650',
      });
      expect(entryCharge(1, tx.frames[1]!, 10_000n)).to.include({ ok: true, gas: 10_000n });
    });

    it('knows the expiry frame only as frame 0 of VERIFY mode aimed at the verifier', () => {
      const tx = txOf([self, expiryFrame, { ...expiryFrame, mode: 2 }]);
      expect([0, 1, 2].map((i) => isExpiryFrame(i, tx.frames[i]!))).to.deep.equal([false, false, false]);
      const first = txOf([expiryFrame, self]);
      expect(isExpiryFrame(0, first.frames[0]!)).to.equal(true);
      const sending = txOf([{ ...expiryFrame, mode: 2 }, self]);
      expect(isExpiryFrame(0, sending.frames[0]!)).to.equal(false);
      // A frame without a target runs at the sender, even a sender at the verifier's address.
      const atVerifier = decodeFrameTransaction(
        encodeFrameTx({ sender: EXPIRY, frames: [self], signatures: [{ scheme: 1, signature: SIG65 }], fees: [0n, 1n, 0n] }),
      );
      expect(isExpiryFrame(0, atVerifier.frames[0]!)).to.equal(false);
    });
  });

  describe('default code', () => {
    const rich = async () => 10n ** 18n;

    it("approves the frame's scope for the sender's own entry, and records it", async () => {
      const tx = txOf([self]);
      const approvals = new Approvals(tx, true);
      expect(await runDefaultCode(tx, tx.frames[0]!, approvals, 1_000n, rich)).to.deep.equal({ ok: true, scope: 3n });
      expect([approvals.senderApproved, approvals.payer]).to.deep.equal([true, SENDER]);
    });

    it("reverts when the entry is not the target's, and halts a payment that would create the sender without state gas", async () => {
      const sponsored = txOf(
        [
          { mode: 1, flags: 2, executionGas: 10_000n },
          { mode: 1, flags: 1, target: SPONSOR, executionGas: 10_000n },
        ],
        [
          { scheme: 1, signature: SIG65 },
          { scheme: 1, signature: SIG65 },
        ],
      );
      const approvals = new Approvals(sponsored, false);
      expect(await runDefaultCode(sponsored, sponsored.frames[0]!, approvals, 1_000n, rich)).to.deep.equal({ ok: true, scope: 2n });
      // Entry 1 names no signer: it resolves to the sender, not the sponsor.
      expect(await runDefaultCode(sponsored, sponsored.frames[1]!, approvals, 1_000n, rich)).to.deep.include({
        ok: false,
        halt: false,
        cause: 'reverted',
      });
      const own = txOf([self]);
      expect(await runDefaultCode(own, own.frames[0]!, new Approvals(own, false), 1_000n, rich, 0n)).to.deep.equal({
        ok: false,
        halt: true,
        cause: 'out of state gas',
        detail: 'creating the sender needs 183600 state gas, the frame has 0 left',
      });
    });

    it("reverts a payer that cannot cover the maximum cost, reading the balance of the frame's target", async () => {
      const tx = txOf([self]);
      const asked: string[] = [];
      const poor = async (address: string) => {
        asked.push(address);
        return 999n;
      };
      expect(await runDefaultCode(tx, tx.frames[0]!, new Approvals(tx, true), 1_000n, poor)).to.deep.equal({
        ok: false,
        halt: false,
        cause: 'reverted',
        detail: 'the payer cannot cover the maximum cost',
      });
      expect(asked).to.deep.equal([SENDER]);
    });
  });
});
