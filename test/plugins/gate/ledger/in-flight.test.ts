import { expect } from 'chai';
import { InFlight, type InFlightEntry } from '../../../../plugins/gate/ledger/in-flight.js';

const ALICE = `0x${'11'.repeat(20)}`;
const BOB = `0x${'22'.repeat(20)}`;
const SPONSOR = `0x${'33'.repeat(20)}`;
const HEAD = 100n;
const TX = `0x${'aa'.repeat(32)}`;
const OTHER_TX = `0x${'bb'.repeat(32)}`;

/** A transaction hash that names its sender's first byte and its nonce, so that failures read. */
const hashOf = (sender: string, nonce: bigint) => `0x${sender.slice(2, 4)}${nonce.toString(16).padStart(62, '0')}`;

/** Alice's transaction `nonce`, taken at HEAD, paying 1 wei for herself, unless told otherwise. */
function entry(nonce: bigint, fields: Partial<InFlightEntry> & { sender?: string } = {}): InFlightEntry {
  const { sender = ALICE, ...rest } = fields;
  return { hash: hashOf(sender, nonce), nonce, payer: sender, cost: 1n, head: HEAD, ...rest };
}

/**
 * Whom the maps still hold. The sweep exists so that abandoned senders do not hold memory, which
 * no public method shows (`pending` answers an empty set for a kept empty map too): so this peeks.
 */
function held(inFlight: InFlight) {
  const maps = inFlight as unknown as { bySender: Map<string, unknown>; byPayer: Map<string, unknown> };
  return { senders: [...maps.bySender.keys()], payers: [...maps.byPayer.keys()] };
}

/** The nonces still pending for `sender`, in insertion order. */
const pendingNonces = (inFlight: InFlight, sender: string, stateNonce: bigint, head: bigint) => [
  ...inFlight.pending(sender, stateNonce, head).keys(),
];

describe('gate: in-flight slots', () => {
  describe('pending', () => {
    it('is empty for a sender that never took a slot', () => {
      const inFlight = new InFlight(3n);
      expect(inFlight.pending(ALICE, 0n, HEAD).size).to.equal(0);
    });

    it('returns the entries added for the sender, by nonce, and not those of another sender', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(5n));
      inFlight.add(ALICE, entry(6n, { cost: 7n }));
      inFlight.add(BOB, entry(5n, { sender: BOB }));
      expect([...inFlight.pending(ALICE, 0n, HEAD)]).to.deep.equal([
        [5n, entry(5n)],
        [6n, entry(6n, { cost: 7n })],
      ]);
      expect(pendingNonces(inFlight, BOB, 0n, HEAD)).to.deep.equal([5n]);
    });

    it('counts slots below the state nonce as done, and keeps the slot exactly at it', () => {
      const inFlight = new InFlight(3n);
      for (const nonce of [4n, 5n, 6n]) inFlight.add(ALICE, entry(nonce, { cost: 10n }));
      expect(pendingNonces(inFlight, ALICE, 5n, HEAD)).to.deep.equal([5n, 6n]);
      // Done slots are forgotten for good, even when a later call asks with a lower state nonce.
      expect(pendingNonces(inFlight, ALICE, 0n, HEAD)).to.deep.equal([5n, 6n]);
      expect(inFlight.reserved(ALICE, HEAD)).to.equal(20n);
    });

    it('with skipAfterBlocks 3: a slot taken at head 100 is pending at 102 and done at 103', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { head: 100n }));
      inFlight.add(ALICE, entry(1n, { head: 101n }));
      expect(pendingNonces(inFlight, ALICE, 0n, 102n)).to.deep.equal([0n, 1n]);
      expect(pendingNonces(inFlight, ALICE, 0n, 103n)).to.deep.equal([1n]);
      expect(pendingNonces(inFlight, ALICE, 0n, 104n)).to.deep.equal([]);
    });

    it('with skipAfterBlocks 1: a slot taken at head 100 is pending at 100 and done at 101', () => {
      const inFlight = new InFlight(1n);
      inFlight.add(ALICE, entry(0n, { head: 100n }));
      expect(pendingNonces(inFlight, ALICE, 0n, 100n)).to.deep.equal([0n]);
      expect(pendingNonces(inFlight, ALICE, 0n, 101n)).to.deep.equal([]);
    });

    it('counts from the head an acknowledgement saw, only forward and only for the hash that holds the slot', () => {
      const inFlight = new InFlight(1n);
      inFlight.add(ALICE, entry(0n, { head: 100n, payer: SPONSOR, cost: 5n }));
      inFlight.acknowledge(ALICE, 0n, hashOf(ALICE, 0n), 102n);
      inFlight.acknowledge(ALICE, 0n, hashOf(ALICE, 0n), 101n);
      inFlight.acknowledge(ALICE, 0n, OTHER_TX, 300n);
      expect(pendingNonces(inFlight, ALICE, 0n, 102n)).to.deep.equal([0n]);
      expect(inFlight.reserved(SPONSOR, 102n)).to.equal(5n);
      expect(pendingNonces(inFlight, ALICE, 0n, 103n)).to.deep.equal([]);
      expect(inFlight.reserved(SPONSOR, 103n)).to.equal(0n);
    });

    it('leaves the slots of other senders alone when it prunes one', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n));
      inFlight.add(BOB, entry(0n, { sender: BOB }));
      expect(pendingNonces(inFlight, ALICE, 1n, HEAD + 10n)).to.deep.equal([]);
      // Asked at the old head, so that only the earlier pruning (not this call's) could have dropped it.
      expect(pendingNonces(inFlight, BOB, 0n, HEAD)).to.deep.equal([0n]);
      expect([inFlight.reserved(ALICE, HEAD), inFlight.reserved(BOB, HEAD)]).to.deep.equal([0n, 1n]);
      expect(held(inFlight)).to.deep.equal({ senders: [BOB], payers: [BOB] });
    });
  });

  describe('release', () => {
    it('gives back a slot only to the hash that holds it', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { cost: 5n }));
      inFlight.release(ALICE, 0n, hashOf(BOB, 0n));
      inFlight.release(ALICE, 1n, hashOf(ALICE, 0n));
      inFlight.release(BOB, 0n, hashOf(ALICE, 0n));
      expect(pendingNonces(inFlight, ALICE, 0n, HEAD)).to.deep.equal([0n]);
      expect(inFlight.reserved(ALICE, HEAD)).to.equal(5n);

      inFlight.release(ALICE, 0n, hashOf(ALICE, 0n));
      expect(pendingNonces(inFlight, ALICE, 0n, HEAD)).to.deep.equal([]);
      expect(inFlight.reserved(ALICE, HEAD)).to.equal(0n);
    });

    it('is harmless for a sender or nonce that holds nothing, and for a slot already released', () => {
      const inFlight = new InFlight(3n);
      inFlight.release(ALICE, 0n, hashOf(ALICE, 0n));
      inFlight.add(ALICE, entry(0n, { cost: 5n }));
      inFlight.release(ALICE, 0n, hashOf(ALICE, 0n));
      inFlight.release(ALICE, 0n, hashOf(ALICE, 0n));
      expect(pendingNonces(inFlight, ALICE, 0n, HEAD)).to.deep.equal([]);
      expect(inFlight.reserved(ALICE, HEAD)).to.equal(0n);
    });
  });

  describe('reserved', () => {
    it('is 0 for a payer with nothing in flight', () => {
      expect(new InFlight(3n).reserved(SPONSOR, HEAD)).to.equal(0n);
    });

    it('sums the costs per payer across senders, apart from the senders themselves', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { cost: 10n }));
      inFlight.add(ALICE, entry(1n, { cost: 20n, payer: SPONSOR }));
      inFlight.add(BOB, entry(0n, { sender: BOB, cost: 300n, payer: SPONSOR }));
      inFlight.add(BOB, entry(1n, { sender: BOB, cost: 4000n }));
      expect([ALICE, BOB, SPONSOR].map((payer) => inFlight.reserved(payer, HEAD))).to.deep.equal([10n, 4000n, 320n]);
    });

    it("drops the cost of released slots and of slots their sender's pruning shows done", () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { cost: 1n, payer: SPONSOR }));
      inFlight.add(ALICE, entry(1n, { cost: 20n, payer: SPONSOR }));
      inFlight.add(BOB, entry(0n, { sender: BOB, cost: 300n, payer: SPONSOR, head: HEAD + 1n }));
      inFlight.add(BOB, entry(1n, { sender: BOB, cost: 4000n, payer: SPONSOR, head: HEAD + 2n }));
      inFlight.release(ALICE, 1n, hashOf(ALICE, 1n));
      // Asked at HEAD, where none is done, so that only the release and `pending` drop costs.
      expect(inFlight.reserved(SPONSOR, HEAD)).to.equal(4301n);
      inFlight.pending(ALICE, 1n, HEAD);
      expect(inFlight.reserved(SPONSOR, HEAD)).to.equal(4300n);
      inFlight.pending(BOB, 0n, HEAD + 4n);
      expect(inFlight.reserved(SPONSOR, HEAD)).to.equal(4000n);
    });

    it("with skipAfterBlocks 3: a one-off sender's slot counts for its sponsor at 102 and is dropped at 103", () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { cost: 7n, payer: SPONSOR, head: 100n }));
      inFlight.add(BOB, entry(0n, { sender: BOB, cost: 300n, payer: SPONSOR, head: 101n }));
      expect(inFlight.reserved(SPONSOR, 102n), 'one short').to.equal(307n);
      expect(inFlight.reserved(SPONSOR, 103n), 'at 100 + 3').to.equal(300n);
      // Dropped, not skipped over: asked again at an earlier head, it stays gone, slot included.
      expect(inFlight.reserved(SPONSOR, 100n), 'at 100 again').to.equal(300n);
      expect(pendingNonces(inFlight, ALICE, 0n, 0n)).to.deep.equal([]);
      expect(held(inFlight)).to.deep.equal({ senders: [BOB], payers: [SPONSOR] });
      expect(inFlight.reserved(SPONSOR, 104n), 'at 101 + 3').to.equal(0n);
      expect(held(inFlight)).to.deep.equal({ senders: [], payers: [] });
    });

    it("drops only the asked payer's done slots: the sender's slots for other payers stay", () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { cost: 7n, payer: SPONSOR }));
      inFlight.add(ALICE, entry(1n, { cost: 10n }));
      inFlight.add(ALICE, entry(2n, { cost: 20n, payer: SPONSOR, head: HEAD + 1n }));
      expect(inFlight.reserved(SPONSOR, HEAD + 3n)).to.equal(20n);
      expect(pendingNonces(inFlight, ALICE, 0n, 0n)).to.deep.equal([1n, 2n]);
      expect(inFlight.reserved(ALICE, HEAD)).to.equal(10n);
    });

    it("counts a slot its sender's state nonce passed until the sender is pruned: the payer knows no state nonce", () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { cost: 7n, payer: SPONSOR }));
      inFlight.pending(BOB, 5n, HEAD + 2n);
      expect(inFlight.reserved(SPONSOR, HEAD + 2n)).to.equal(7n);
      inFlight.pending(ALICE, 5n, HEAD);
      expect(inFlight.reserved(SPONSOR, HEAD)).to.equal(0n);
    });
  });

  describe('add', () => {
    it('replaces the entry at a taken nonce, and its cost, whichever its payer', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { cost: 5n, payer: SPONSOR }));
      inFlight.add(ALICE, entry(0n, { cost: 7n, payer: SPONSOR, hash: TX }));
      expect([inFlight.reserved(SPONSOR, HEAD), inFlight.reserved(ALICE, HEAD)], 'same payer').to.deep.equal([7n, 0n]);
      inFlight.add(ALICE, entry(0n, { cost: 11n, hash: OTHER_TX }));
      expect([inFlight.reserved(SPONSOR, HEAD), inFlight.reserved(ALICE, HEAD)], 'other payer').to.deep.equal([0n, 11n]);
      expect([...inFlight.pending(ALICE, 0n, HEAD)]).to.deep.equal([[0n, entry(0n, { cost: 11n, hash: OTHER_TX })]]);
      inFlight.release(ALICE, 0n, OTHER_TX);
      expect(held(inFlight)).to.deep.equal({ senders: [], payers: [] });
    });
  });

  describe('sweep', () => {
    it('drops, for every sender, the slots taken skipAfterBlocks or more before the head', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { head: 100n, cost: 1n, payer: SPONSOR }));
      inFlight.add(ALICE, entry(1n, { head: 101n, cost: 20n, payer: SPONSOR }));
      inFlight.add(BOB, entry(0n, { sender: BOB, head: 99n, cost: 300n, payer: SPONSOR }));
      inFlight.sweep(103n);
      // Asked at head 0 and state nonce 0, so that nothing but the sweep could have dropped a slot.
      expect(pendingNonces(inFlight, ALICE, 0n, 0n)).to.deep.equal([1n]);
      expect(pendingNonces(inFlight, BOB, 0n, 0n)).to.deep.equal([]);
      expect(inFlight.reserved(SPONSOR, 0n)).to.equal(20n);
    });

    it('keeps a slot one block short of head + skipAfterBlocks', () => {
      const inFlight = new InFlight(3n);
      inFlight.add(ALICE, entry(0n, { head: 100n }));
      inFlight.sweep(102n);
      expect(pendingNonces(inFlight, ALICE, 0n, 0n)).to.deep.equal([0n]);
      inFlight.sweep(103n);
      expect(pendingNonces(inFlight, ALICE, 0n, 0n)).to.deep.equal([]);
    });

    it('forgets a sender whose slots are all done, and a payer with nothing left reserved', () => {
      const inFlight = new InFlight(1n);
      inFlight.add(ALICE, entry(0n, { head: 100n, cost: 5n }));
      inFlight.add(ALICE, entry(1n, { head: 100n, cost: 5n }));
      inFlight.add(BOB, entry(0n, { sender: BOB, head: 101n }));
      expect(held(inFlight)).to.deep.equal({ senders: [ALICE, BOB], payers: [ALICE, BOB] });
      inFlight.sweep(101n);
      expect(held(inFlight)).to.deep.equal({ senders: [BOB], payers: [BOB] });
      inFlight.sweep(102n);
      expect(held(inFlight)).to.deep.equal({ senders: [], payers: [] });
    });
  });
});
