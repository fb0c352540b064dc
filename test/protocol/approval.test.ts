import { expect } from 'chai';
import { APPROVE_EXECUTION, APPROVE_PAYMENT, Approvals, defaultCodeScope, NEW_ACCOUNT_STATE_GAS } from '../../protocol/approval.js';
import type { Frame, FrameTransaction, SignatureEntry } from '../../protocol/frame-codec.js';

const SENDER = `0x${'5e'.repeat(20)}`;
const SPONSOR = `0x${'5b'.repeat(20)}`;
const OTHER = `0x${'07'.repeat(20)}`;
const MAX_COST = 1_000_000n;
const SECP256K1 = 0x01;
const P256 = 0x02;
const MLDSA65 = 0x65;

const verify = (flags: number, target?: string, stateGas = 0n): Frame => ({
  mode: 1,
  flags,
  target,
  executionGas: 10_000n,
  stateGas,
  value: 0n,
  data: new Uint8Array(0),
});
/** The frames of the prefix shapes (frame-transactions.md section 6 item 7). */
const SELF = verify(3);
const ONLY = verify(2);
const PAY = verify(1, SPONSOR);

const entry = (scheme: number, signer?: string, msg?: Uint8Array): SignatureEntry => ({
  scheme,
  signer,
  msg,
  signature: new Uint8Array(65),
});

const txWith = (frames: Frame[], signatures: SignatureEntry[] = []): FrameTransaction => ({
  chainId: 8141n,
  nonce: 0n,
  sender: SENDER,
  frames,
  signatures,
  maxPriorityFeePerGas: 0n,
  maxFeePerGas: 1n,
  maxFeePerBlobGas: 0n,
  blobVersionedHashes: [],
  hash: `0x${'00'.repeat(32)}`,
  sigHash: `0x${'00'.repeat(32)}`,
});

/** A payer balance that counts its reads. */
function balance(value: bigint) {
  const read = {
    count: 0,
    of: async () => {
      read.count++;
      return value;
    },
  };
  return read;
}
const rich = () => balance(MAX_COST).of;
const revert = (why: string) => ({ ok: false, halt: false, why });

describe('gate: the approval context (EIP-8141 APPROVE and default code)', () => {
  it('names the scopes as EIP-8141 does, and the state gas of a new account as 120 bytes × 1 530 (EIP-8037)', () => {
    expect([APPROVE_PAYMENT, APPROVE_EXECUTION, NEW_ACCOUNT_STATE_GAS]).to.deep.equal([1, 2, 183_600n]);
  });

  describe('APPROVE', () => {
    it('APPROVE(3) by the sender approves execution and makes the sender the payer, reading its balance once', async () => {
      const approvals = new Approvals(txWith([SELF]), true);
      const payer = balance(MAX_COST);
      expect(await approvals.approve(SELF, SENDER, 3n, MAX_COST, payer.of)).to.deep.equal({ ok: true });
      expect(approvals.snapshot()).to.deep.equal({ senderApproved: true, payer: SENDER, senderExists: true });
      expect(payer.count).to.equal(1);
    });

    it('[only, pay]: APPROVE(2) by the sender reads no balance, then APPROVE(1) makes the sponsor the payer', async () => {
      const approvals = new Approvals(txWith([ONLY, PAY]), true);
      const sender = balance(0n);
      expect(await approvals.approve(ONLY, SENDER, 2n, MAX_COST, sender.of)).to.deep.equal({ ok: true });
      expect([approvals.snapshot(), sender.count]).to.deep.equal([{ senderApproved: true, payer: undefined, senderExists: true }, 0]);
      expect(await approvals.approve(PAY, SPONSOR, 1n, MAX_COST, rich())).to.deep.equal({ ok: true });
      expect(approvals.payer).to.equal(SPONSOR);
    });

    it("reverts outside the frame's resolved target", async () => {
      const approvals = new Approvals(txWith([SELF, PAY]), true);
      expect(await approvals.approve(SELF, OTHER, 3n, MAX_COST, rich())).to.deep.equal(revert('APPROVE outside the frame target'));
      expect(await approvals.approve(PAY, SENDER, 1n, MAX_COST, rich())).to.deep.equal(revert('APPROVE outside the frame target'));
    });

    for (const [label, frame, address, scope, allowed] of [
      ['scope 0', SELF, SENDER, 0n, 3],
      ['scope 3 in an only frame', ONLY, SENDER, 3n, 2],
      ['scope 2 in a pay frame', PAY, SPONSOR, 2n, 1],
      ['scope 4 (no such bit)', SELF, SENDER, 4n, 3],
      ['any scope in a frame with flags 0', verify(0), SENDER, 1n, 0],
      ['scope 4 in a frame with the atomic bit set (bit 2 is no scope)', verify(7), SENDER, 4n, 3],
    ] as const) {
      it(`reverts ${label}: beyond the frame's allowed scope`, async () => {
        const approvals = new Approvals(txWith([frame]), true);
        expect(await approvals.approve(frame, address, scope, MAX_COST, rich())).to.deep.equal(
          revert(`APPROVE(${scope}) beyond the frame's allowed scope ${allowed}`),
        );
        expect(approvals.snapshot()).to.deep.equal({ senderApproved: false, payer: undefined, senderExists: true });
      });
    }

    it('reverts execution approved a second time, by APPROVE(2) or APPROVE(3)', async () => {
      const approvals = new Approvals(txWith([ONLY, ONLY, SELF]), true);
      await approvals.approve(ONLY, SENDER, 2n, MAX_COST, rich());
      expect(await approvals.approve(ONLY, SENDER, 2n, MAX_COST, rich())).to.deep.equal(
        revert('execution approved twice or not by the sender'),
      );
      expect(await approvals.approve(SELF, SENDER, 3n, MAX_COST, rich())).to.deep.equal(
        revert('execution approved twice or not by the sender'),
      );
      expect(approvals.payer).to.equal(undefined);
    });

    it('reverts execution approved by an account other than the sender', async () => {
      const elsewhere = verify(3, OTHER);
      const approvals = new Approvals(txWith([elsewhere]), true);
      expect(await approvals.approve(elsewhere, OTHER, 2n, MAX_COST, rich())).to.deep.equal(
        revert('execution approved twice or not by the sender'),
      );
      expect(await approvals.approve(elsewhere, OTHER, 3n, MAX_COST, rich())).to.deep.equal(
        revert('execution approved twice or not by the sender'),
      );
    });

    it('reverts payment approved a second time', async () => {
      const second = verify(1, OTHER);
      const approvals = new Approvals(txWith([ONLY, PAY, second]), true);
      await approvals.approve(ONLY, SENDER, 2n, MAX_COST, rich());
      await approvals.approve(PAY, SPONSOR, 1n, MAX_COST, rich());
      expect(await approvals.approve(second, OTHER, 1n, MAX_COST, rich())).to.deep.equal(revert('payment approved twice'));
      expect(approvals.payer).to.equal(SPONSOR);
    });

    it('reverts payment approved before execution', async () => {
      const approvals = new Approvals(txWith([PAY]), true);
      expect(await approvals.approve(PAY, SPONSOR, 1n, MAX_COST, rich())).to.deep.equal(revert('payment approved before execution'));
      expect(approvals.payer).to.equal(undefined);
    });

    it('takes a payer holding exactly the maximum cost, and reverts one wei less, approving nothing', async () => {
      const short = new Approvals(txWith([SELF]), true);
      expect(await short.approve(SELF, SENDER, 3n, MAX_COST, balance(MAX_COST - 1n).of)).to.deep.equal(
        revert('the payer cannot cover the maximum cost'),
      );
      expect(short.snapshot()).to.deep.equal({ senderApproved: false, payer: undefined, senderExists: true });
      expect(await new Approvals(txWith([SELF]), true).approve(SELF, SENDER, 3n, MAX_COST, balance(MAX_COST).of)).to.deep.equal({
        ok: true,
      });
    });

    it('halts a payment that creates the sender without 183 600 state gas in the frame, applying nothing', async () => {
      const frame = verify(3, undefined, NEW_ACCOUNT_STATE_GAS - 1n);
      const approvals = new Approvals(txWith([frame]), false);
      expect(await approvals.approve(frame, SENDER, 3n, MAX_COST, rich())).to.deep.equal({
        ok: false,
        halt: true,
        why: 'creating the sender needs 183600 state gas, the frame has 183599 left',
      });
      expect(approvals.snapshot()).to.deep.equal({ senderApproved: false, payer: undefined, senderExists: false });
    });

    it('takes exactly 183 600 state gas for a new sender, which then exists', async () => {
      const frame = verify(3, undefined, NEW_ACCOUNT_STATE_GAS);
      const approvals = new Approvals(txWith([frame]), false);
      expect(await approvals.approve(frame, SENDER, 3n, MAX_COST, rich())).to.deep.equal({ ok: true });
      expect(approvals.snapshot()).to.deep.equal({ senderApproved: true, payer: SENDER, senderExists: true });
    });

    it('charges the creation at the pay frame of [only, pay], not at the only frame', async () => {
      const approvals = new Approvals(txWith([ONLY, PAY]), false);
      expect(await approvals.approve(ONLY, SENDER, 2n, MAX_COST, rich())).to.deep.equal({ ok: true });
      expect(await approvals.approve(PAY, SPONSOR, 1n, MAX_COST, rich())).to.deep.equal({
        ok: false,
        halt: true,
        why: 'creating the sender needs 183600 state gas, the frame has 0 left',
      });
      expect(approvals.snapshot()).to.deep.equal({ senderApproved: true, payer: undefined, senderExists: false });
    });

    it('owes no creation state gas once a deploy frame put code at the sender', async () => {
      const approvals = new Approvals(txWith([SELF]), false);
      approvals.senderCreated();
      expect(await approvals.approve(SELF, SENDER, 3n, MAX_COST, rich())).to.deep.equal({ ok: true });
    });

    it('restores the context as a snapshot held it, as a failed call frame undoes its APPROVE', async () => {
      const approvals = new Approvals(txWith([SELF]), false);
      const before = approvals.snapshot();
      await approvals.approve(verify(3, undefined, NEW_ACCOUNT_STATE_GAS), SENDER, 3n, MAX_COST, rich());
      approvals.restore(before);
      expect(approvals.snapshot()).to.deep.equal({ senderApproved: false, payer: undefined, senderExists: false });
      // Undone: the sender's creation is owed again, and the approval can be given again.
      expect(await approvals.approve(SELF, SENDER, 3n, MAX_COST, rich())).to.deep.equal({
        ok: false,
        halt: true,
        why: 'creating the sender needs 183600 state gas, the frame has 0 left',
      });
      expect(await approvals.approve(verify(3, undefined, NEW_ACCOUNT_STATE_GAS), SENDER, 3n, MAX_COST, rich())).to.deep.equal({
        ok: true,
      });
    });
  });

  describe('defaultCodeScope: default code in a VERIFY frame', () => {
    const why = (index: number, target: string) => ({
      why: `default code: signature ${index} must be a SECP256K1 or MLDSA65 entry of ${target} over the signature hash`,
    });

    for (const [label, signatures] of [
      ['a SECP256K1 entry 0 of the sender (empty signer)', [entry(SECP256K1)]],
      ['an MLDSA65 entry 0 (the project extension)', [entry(MLDSA65)]],
      ['an entry 0 naming the sender explicitly', [entry(SECP256K1, SENDER)]],
    ] as const) {
      it(`approves the frame's scope (3) for ${label}`, () => {
        expect(defaultCodeScope(txWith([SELF], [...signatures]), SELF)).to.deep.equal({ scope: 3n });
      });
    }

    it('reads entry 0 for a scope with execution (only: 2), entry 1 for payment alone (pay: 1)', () => {
      const tx = txWith([ONLY, PAY], [entry(SECP256K1), entry(SECP256K1, SPONSOR)]);
      expect([defaultCodeScope(tx, ONLY), defaultCodeScope(tx, PAY)]).to.deep.equal([{ scope: 2n }, { scope: 1n }]);
    });

    for (const [label, signatures] of [
      ['no entry 0', []],
      ['a P256 entry 0', [entry(P256)]],
      ['an ARBITRARY entry 0', [entry(0x00)]],
      ['an entry 0 of a scheme the chain has not enabled (0x44)', [entry(0x44)]],
      ['an entry 0 with its own msg', [entry(SECP256K1, undefined, new Uint8Array(32).fill(1))]],
      ['an entry 0 of another signer', [entry(SECP256K1, OTHER)]],
    ] as const) {
      it(`reverts a self frame with ${label}`, () => {
        expect(defaultCodeScope(txWith([SELF], [...signatures]), SELF)).to.deep.equal(why(0, SENDER));
      });
    }

    it('reverts a pay frame whose entry 1 resolves to the sender, not the sponsor it targets', () => {
      const tx = txWith([ONLY, PAY], [entry(SECP256K1), entry(SECP256K1)]);
      expect(defaultCodeScope(tx, PAY)).to.deep.equal(why(1, SPONSOR));
    });

    it('reverts a frame that allows no scope (flags 0), naming entry 1', () => {
      const none = verify(0);
      expect(defaultCodeScope(txWith([none], [entry(SECP256K1), entry(SECP256K1)]), none)).to.deep.equal(why(1, SENDER));
    });
  });
});
