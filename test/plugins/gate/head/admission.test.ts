import { expect } from 'chai';
import { Wallet } from 'ethers';
import { checkAdmission, type AdmissionLimits, type Release } from '../../../../plugins/gate/head/admission.js';
import { authoritiesOf, decodeCode } from '../../../../protocol/index.js';
import { decodeSubmission, type Submission } from '../../../../plugins/gate/submission/decode.js';
import { InFlightRefusal, Refusal } from '../../../../plugins/gate/errors.js';
import type { InFlightEntry } from '../../../../plugins/gate/ledger/in-flight.js';
import { MemoryLedger, type Ledger, type Reservation, type ReserveRequest } from '../../../../plugins/gate/ledger/ledger.js';
import { PaymasterTurns } from '../../../../plugins/gate/ledger/paymaster-turns.js';
import { sharedTurns } from '../../../../plugins/gate/ledger/paymaster-turns-shared.js';
import { Fleet } from '../../../../src/fleet.js';
import { createLogger } from '../../../../src/log.js';
import { readRawTransaction } from '../../../../plugins/gate/submission/raw-transaction.js';
import type { Account, Head, HeadState } from '../../../../plugins/gate/head/state.js';
import { RECIPIENT, secp256k1Entry, signed, type FrameTxFields } from '../../../../support/frames.js';

const SENDER_KEY = `0x${'00'.repeat(31)}01`;
const SPONSOR_KEY = `0x${'00'.repeat(31)}02`;
const SENDER = new Wallet(SENDER_KEY).address.toLowerCase();
const SPONSOR = new Wallet(SPONSOR_KEY).address.toLowerCase();
const EXPIRY_VERIFIER = '0x0000000000000000000000000000000000008141';

const DECODE_LIMITS = { chainId: 8141n, blockGasLimit: 60_000_000n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n };
const LIMITS: AdmissionLimits = { nonceGapMax: 64n, inFlightCap: 16, frameInFlightCap: 1, contiguousNonces: false, skipAfterBlocks: 3n };
const HEAD: Head = { number: 100n, baseFee: 1_000_000_000n, timestamp: 1_700_000_000n, coinbase: `0x${'00'.repeat(20)}` };
const STATE_NONCE = 5n;
const RICH = 10n ** 24n;

const signSender = (digest: string) => secp256k1Entry(SENDER_KEY, digest);
const signSponsor = (digest: string) => secp256k1Entry(SPONSOR_KEY, digest);
const decode = (raw: string): Submission => decodeSubmission(readRawTransaction([raw]), DECODE_LIMITS);

/** [self VERIFY, SENDER to RECIPIENT], optionally behind an expiry frame; the sender pays. */
function selfFrame(options: { nonce?: bigint; deadline?: bigint; maxFee?: bigint } = {}): Submission {
  const fields: FrameTxFields = {
    nonce: options.nonce ?? STATE_NONCE,
    sender: SENDER,
    frames: [
      { mode: 1, flags: 3, executionGas: 10_000n },
      { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 1n },
    ],
    signatures: [{ scheme: 1 }],
    fees: [0n, options.maxFee ?? 2_000_000_000n, 0n],
  };
  if (options.deadline !== undefined) {
    const data = `0x${options.deadline.toString(16).padStart(16, '0')}`;
    fields.frames.unshift({ mode: 1, flags: 0, target: EXPIRY_VERIFIER, executionGas: 5_000n, data });
  }
  return decode(signed(fields, [signSender]));
}

/** [only (sender), pay (SPONSOR), SENDER to RECIPIENT]: the sponsor pays. */
function sponsoredFrame(from: { key: string; address: string } = { key: SENDER_KEY, address: SENDER }): Submission {
  const fields: FrameTxFields = {
    nonce: STATE_NONCE,
    sender: from.address,
    frames: [
      { mode: 1, flags: 2, executionGas: 10_000n },
      { mode: 1, flags: 1, target: SPONSOR, executionGas: 10_000n },
      { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 1n },
    ],
    signatures: [{ scheme: 1 }, { scheme: 1, signer: SPONSOR }],
    fees: [0n, 2_000_000_000n, 0n],
  };
  return decode(signed(fields, [(digest) => secp256k1Entry(from.key, digest), signSponsor]));
}

/** [only (from), pay (payer), SENDER to RECIPIENT with `value`]: `payer`, code-less, pays. */
function paidBy(from: { key: string; address: string }, payer: { key: string; address: string }, value: bigint): Submission {
  const fields: FrameTxFields = {
    nonce: 0n,
    sender: from.address,
    frames: [
      { mode: 1, flags: 2, executionGas: 10_000n },
      { mode: 1, flags: 1, target: payer.address, executionGas: 10_000n },
      { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value },
    ],
    signatures: [{ scheme: 1 }, { scheme: 1, signer: payer.address }],
    fees: [0n, 2_000_000_000n, 0n],
  };
  return decode(signed(fields, [(digest) => secp256k1Entry(from.key, digest), (digest) => secp256k1Entry(payer.key, digest)]));
}

/** The sponsor's own frame transaction, sending `value` to RECIPIENT: it pays for itself. */
function sponsorsOwn(value: bigint): Submission {
  const fields: FrameTxFields = {
    nonce: 0n,
    sender: SPONSOR,
    frames: [
      { mode: 1, flags: 3, executionGas: 10_000n },
      { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value },
    ],
    signatures: [{ scheme: 1 }],
    fees: [0n, 2_000_000_000n, 0n],
  };
  return decode(signed(fields, [signSponsor]));
}

/** A type 0x02 transfer from the same sender (key) as the frame transactions. */
async function standardTx(nonce: bigint): Promise<Submission> {
  const raw = await new Wallet(SENDER_KEY).signTransaction({
    type: 2,
    chainId: 8141,
    nonce: Number(nonce),
    to: RECIPIENT,
    gasLimit: 21_000,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 0n,
  });
  return decode(raw);
}

/** A type 0x04 transaction from `from` (key) whose authorizations `authorizers` (keys) sign, its authorities recovered as the judge does. */
async function delegation(fromKey: string, authorizers: readonly string[], nonce = 0): Promise<Submission> {
  const authorizationList = await Promise.all(
    authorizers.map((key) => new Wallet(key).authorize({ address: RECIPIENT, nonce: 0, chainId: 8141 })),
  );
  const raw = await new Wallet(fromKey).signTransaction({
    type: 4,
    chainId: 8141,
    nonce,
    to: RECIPIENT,
    gasLimit: 100_000,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 0n,
    authorizationList,
  });
  const sub = decode(raw);
  return { ...sub, authorities: authoritiesOf(sub.raw.bytes, 8141n) };
}

/** Head state at `head`: accounts by address; any other address is empty (nonce 0, balance 0). */
function fakeStateAt(
  head: Head,
  accounts: Record<string, Account> = { [SENDER]: { nonce: STATE_NONCE, balance: RICH } },
  codes: Record<string, string> = {},
): HeadState {
  const fake = {
    account: async (address: string, asked: Head) => (asked === head ? accounts[address] : undefined) ?? { nonce: 0n, balance: 0n },
    codeEntry: async (address: string) => decodeCode(codes[address] ?? '0x'),
  };
  // HeadState is a class with private members: a plain object fits it only through a cast.
  return fake as unknown as HeadState;
}
const fakeState = (accounts: Record<string, Account>) => fakeStateAt(HEAD, accounts);

/**
 * The in-flight part of the Ledger contract (ledger.ts): slots per sender by nonce; those below
 * the state nonce are done; a taken nonce, then the cap, refuse; each slot reserves its cost.
 * Slots never end by head here; the heads that `reserved` is asked at are recorded instead.
 */
class FakeLedger implements Ledger {
  readonly slots = new Map<string, Map<bigint, InFlightEntry>>();
  readonly reservedAsked: Array<[payer: string, head: bigint]> = [];

  async reserve({ sender, entry, stateNonce, cap }: ReserveRequest): Promise<Reservation> {
    const slots = this.slots.get(sender) ?? new Map<bigint, InFlightEntry>();
    this.slots.set(sender, slots);
    for (const nonce of slots.keys()) if (nonce < stateNonce) slots.delete(nonce);
    if (slots.has(entry.nonce)) return 'nonce-in-flight';
    if (slots.size >= cap) return 'cap';
    slots.set(entry.nonce, entry);
    return 'ok';
  }
  async release(sender: string, nonce: bigint, hash: string) {
    const slots = this.slots.get(sender);
    if (slots?.get(nonce)?.hash === hash) slots.delete(nonce);
  }
  // Acknowledgement comes after admission (judge.ts).
  async acknowledged() {}
  async reserved(payer: string, head: bigint) {
    this.reservedAsked.push([payer, head]);
    let sum = 0n;
    for (const slots of this.slots.values()) for (const entry of slots.values()) if (entry.payer === payer) sum += entry.cost;
    return sum;
  }
  async pending(sender: string, stateNonce: bigint) {
    return [...(this.slots.get(sender)?.values() ?? [])].filter((entry) => entry.nonce >= stateNonce);
  }
  async sponsoring(payer: string) {
    for (const [sender, slots] of this.slots)
      for (const entry of slots.values()) if (entry.payer === payer && sender !== payer) return true;
    return false;
  }
  async delegating(account: string) {
    for (const slots of this.slots.values()) for (const entry of slots.values()) if (entry.authorities?.includes(account)) return true;
    return false;
  }
  held(sender: string): bigint[] {
    return [...(this.slots.get(sender)?.keys() ?? [])];
  }

  // The duplicate window and verdict cache are not admission's business.
  isAdmitted(): Promise<boolean> {
    throw new Error('admission does not read the duplicate window');
  }
  claim(): Promise<boolean> {
    throw new Error('admission does not claim');
  }
  unclaim(): Promise<void> {
    throw new Error('admission does not unclaim');
  }
  refusal(): Promise<undefined> {
    throw new Error('admission does not read verdicts');
  }
  remember(): Promise<void> {
    throw new Error('admission does not remember verdicts');
  }
}

type Outcome = 'admitted' | { reason: string; detail: string };

async function admit(
  sub: Submission,
  options: { state?: HeadState; ledger?: Ledger; limits?: AdmissionLimits; head?: Head } = {},
): Promise<{ outcome: Outcome; release?: Release }> {
  const state = options.state ?? fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: RICH } });
  try {
    const release = await checkAdmission(sub, options.head ?? HEAD, state, options.ledger ?? new FakeLedger(), options.limits ?? LIMITS);
    return { outcome: 'admitted', release };
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return { outcome: { reason: err.reason, detail: err.detail } };
  }
}
const outcome = async (sub: Submission, options: Parameters<typeof admit>[1] = {}) => (await admit(sub, options)).outcome;

describe('gate: admission against head state', () => {
  it("refuses a frame transaction whose nonce is not the sender's state nonce (nonce-mismatch)", async () => {
    const mismatch = {
      reason: 'nonce-mismatch',
      detail: "a frame transaction's nonce must be the sender's next nonce 5",
    };
    expect(await outcome(selfFrame({ nonce: STATE_NONCE + 1n })), 'state nonce + 1').to.deep.equal(mismatch);
    expect(await outcome(selfFrame({ nonce: STATE_NONCE + 2n })), 'state nonce + 2').to.deep.equal(mismatch);
    expect(await outcome(selfFrame({ nonce: STATE_NONCE - 1n })), 'state nonce - 1').to.deep.equal({
      reason: 'nonce-too-low',
      detail: "nonce too low: the sender's next nonce is 5",
    });
    expect(await outcome(selfFrame({ nonce: STATE_NONCE })), 'state nonce').to.equal('admitted');
    // A standard transaction may run ahead of the state nonce (up to the gap bound).
    expect(await outcome(await standardTx(STATE_NONCE + 1n)), 'standard, state nonce + 1').to.equal('admitted');
  });

  it('names the pending transaction a frame transaction ahead of the state nonce waits for, and the last block it may (sender-pending)', async () => {
    const ledger = new FakeLedger();
    const first = selfFrame({ nonce: STATE_NONCE });
    expect(await outcome(first, { ledger })).to.equal('admitted');
    const refused = await checkAdmission(
      selfFrame({ nonce: STATE_NONCE + 1n }),
      HEAD,
      fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: RICH } }),
      ledger,
      LIMITS,
    ).then(
      () => undefined,
      (err: unknown) => err as InFlightRefusal,
    );
    expect(refused).to.be.instanceOf(InFlightRefusal);
    expect({ reason: refused!.reason, detail: refused!.detail, extra: refused!.extra }).to.deep.equal({
      reason: 'sender-pending',
      detail: `a transaction of this sender is pending (${first.hash}, nonce 5) and a frame transaction's nonce must be the sender's next nonce 5: one pending transaction per sender (EIP-8141 mempool rules); send this one once that one is included, or after block 103 if it is not`,
      extra: { pending: first.hash, until_block: '0x67' },
    });
  });

  it('with contiguous_nonces: refuses a nonce ahead of the state nonce until every nonce between is in flight (nonce-not-contiguous)', async () => {
    const ledger = new MemoryLedger({ duplicateWindowMs: 1_000, verdictTtlMs: 1_000, maxEntries: 100, skipAfterBlocks: 1n });
    const limits = { ...LIMITS, contiguousNonces: true };
    const gapped = {
      reason: 'nonce-not-contiguous',
      detail:
        "nonce too high: nonce 7 is ahead of the sender's next nonce 5, and not every nonce between is in flight (this chain runs transactions in arrival order: it would be skipped)",
    };
    expect(await outcome(await standardTx(STATE_NONCE + 2n), { ledger, limits }), 'state nonce + 2, nothing in flight').to.deep.equal(
      gapped,
    );
    expect(await outcome(await standardTx(STATE_NONCE), { ledger, limits }), 'state nonce').to.equal('admitted');
    expect(await outcome(await standardTx(STATE_NONCE + 2n), { ledger, limits }), 'state nonce + 2, + 1 missing').to.deep.equal(gapped);
    expect(await outcome(await standardTx(STATE_NONCE + 1n), { ledger, limits }), 'state nonce + 1').to.equal('admitted');
    expect(await outcome(await standardTx(STATE_NONCE + 2n), { ledger, limits }), 'state nonce + 2, a run').to.equal('admitted');
  });

  it('admits one pending transaction per paymaster with code, from any sender (paymaster-pending); a code-less sponsor, as its funds allow', async () => {
    const other = { key: `0x${'00'.repeat(31)}03`, address: new Wallet(`0x${'00'.repeat(31)}03`).address.toLowerCase() };
    const accounts = {
      [SENDER]: { nonce: STATE_NONCE, balance: 0n },
      [other.address]: { nonce: STATE_NONCE, balance: 0n },
      [SPONSOR]: { nonce: 0n, balance: RICH },
    };
    const withCode = fakeStateAt(HEAD, accounts, { [SPONSOR]: '0x6001' });
    const ledger = new MemoryLedger({ duplicateWindowMs: 1_000, verdictTtlMs: 1_000, maxEntries: 100, skipAfterBlocks: 1n });
    expect(await outcome(sponsoredFrame(), { ledger, state: withCode }), 'first').to.equal('admitted');
    expect(await outcome(sponsoredFrame(other), { ledger, state: withCode }), 'second, another sender').to.deep.equal({
      reason: 'paymaster-pending',
      detail: `the paymaster ${SPONSOR} already pays for 1 pending transaction: a sponsor with code takes one at a time (EIP-8141 mempool rules); retry once it is included`,
    });
    const codeless = fakeStateAt(HEAD, accounts);
    const another = new MemoryLedger({ duplicateWindowMs: 1_000, verdictTtlMs: 1_000, maxEntries: 100, skipAfterBlocks: 1n });
    expect(await outcome(sponsoredFrame(), { ledger: another, state: codeless }), 'code-less, first').to.equal('admitted');
    expect(await outcome(sponsoredFrame(other), { ledger: another, state: codeless }), 'code-less, second').to.equal('admitted');
  });

  it("gives a paymaster's free slot to another source waiting for it before its last holder (B2)", async () => {
    const other = { key: `0x${'00'.repeat(31)}03`, address: new Wallet(`0x${'00'.repeat(31)}03`).address.toLowerCase() };
    const third = { key: `0x${'00'.repeat(31)}04`, address: new Wallet(`0x${'00'.repeat(31)}04`).address.toLowerCase() };
    const accounts = {
      [SENDER]: { nonce: STATE_NONCE, balance: 0n },
      [other.address]: { nonce: STATE_NONCE, balance: 0n },
      [third.address]: { nonce: STATE_NONCE, balance: 0n },
      [SPONSOR]: { nonce: 0n, balance: RICH },
    };
    const ledger = new MemoryLedger({ duplicateWindowMs: 1_000, verdictTtlMs: 1_000, maxEntries: 100, skipAfterBlocks: 1n });
    const paymasters = sharedTurns(new Fleet({ store: 'memory', redisUrl: undefined }, createLogger('error')), new PaymasterTurns());
    const at = async (number: bigint, sub: Submission, source: string) => {
      const head = { ...HEAD, number };
      const state = fakeStateAt(head, accounts, { [SPONSOR]: '0x6001' });
      try {
        await checkAdmission(sub, head, state, ledger, LIMITS, { source, paymasters });
        return 'admitted';
      } catch (err) {
        return (err as Refusal).detail;
      }
    };
    // The poller takes the slot; the other source is refused while it is pending.
    expect(await at(100n, sponsoredFrame(), 'poller')).to.equal('admitted');
    expect(await at(100n, sponsoredFrame(other), 'user')).to.match(/^the paymaster .* already pays for 1 pending transaction/);
    // The slot is free at 101 (skip_after_blocks 1): the poller, who held it last, yields it.
    expect(await at(101n, sponsoredFrame(third), 'poller')).to.equal(
      `the paymaster ${SPONSOR}'s pending slot goes to another source waiting for it: this source held it last (EIP-8141 mempool rules: a sponsor with code takes one at a time); retry after block 103`,
    );
    expect(await at(101n, sponsoredFrame(other), 'user'), 'the one waiting').to.equal('admitted');
    // Then the poller's turn again, once it has waited.
    expect(await at(101n, sponsoredFrame(third), 'poller')).to.match(/already pays for 1 pending transaction/);
    expect(await at(102n, sponsoredFrame(third), 'poller')).to.equal('admitted');
  });

  it('keeps a sponsor from sending its value in a transaction another pays for while it pays for others, and the reverse (sponsor-pending)', async () => {
    const sponsor = { key: SPONSOR_KEY, address: SPONSOR };
    const backer = { key: `0x${'00'.repeat(31)}05`, address: new Wallet(`0x${'00'.repeat(31)}05`).address.toLowerCase() };
    const user = { key: SENDER_KEY, address: SENDER };
    const accounts = {
      [SENDER]: { nonce: 0n, balance: 0n },
      [SPONSOR]: { nonce: 0n, balance: RICH },
      [backer.address]: { nonce: 0n, balance: RICH },
    };
    const state = fakeStateAt(HEAD, accounts);
    const fresh = () => new MemoryLedger({ duplicateWindowMs: 1_000, verdictTtlMs: 1_000, maxEntries: 100, skipAfterBlocks: 1n });
    const forward = fresh();
    expect(await outcome(paidBy(user, sponsor, 0n), { ledger: forward, state }), 'the sponsor pays for a user').to.equal('admitted');
    expect(await outcome(paidBy(sponsor, backer, RICH - 1n), { ledger: forward, state }), 'its value, paid by another').to.deep.equal({
      reason: 'sponsor-pending',
      detail: `the sender ${SPONSOR} pays for transactions pending: one sending its value and paid by another waits until they are included (what it sends would leave them unpaid)`,
    });
    expect(await outcome(paidBy(sponsor, backer, 0n), { ledger: forward, state }), 'no value, paid by another').to.equal('admitted');
    const reverse = fresh();
    expect(await outcome(paidBy(sponsor, backer, RICH - 1n), { ledger: reverse, state }), 'its value first').to.equal('admitted');
    expect(await outcome(paidBy(user, sponsor, 0n), { ledger: reverse, state }), 'then a user it would pay for').to.deep.equal({
      reason: 'sponsor-pending',
      detail: `the payer ${SPONSOR} has a transaction of its own pending that another pays for (it may send the payer's funds away): retry once it is included`,
    });
  });

  it("counts a code-less sponsor's own value-moving transaction against what it sponsors, either way round (B1)", async () => {
    const sponsored = sponsoredFrame();
    const funds = 10n ** 18n;
    const drain = sponsorsOwn(funds - sponsored.maxCost);
    const accounts = { [SENDER]: { nonce: STATE_NONCE, balance: 0n }, [SPONSOR]: { nonce: 0n, balance: funds } };
    const state = fakeStateAt(HEAD, accounts);
    const fresh = () => new MemoryLedger({ duplicateWindowMs: 1_000, verdictTtlMs: 1_000, maxEntries: 100, skipAfterBlocks: 1n });
    // The sponsor sends all it has but one transaction's gas away: nothing it sponsors can be paid.
    const drained = fresh();
    expect(await outcome(drain, { ledger: drained, state }), 'the drain').to.equal('admitted');
    expect(await outcome(sponsored, { ledger: drained, state }), 'then a sponsored one').to.deep.equal({
      reason: 'payer-balance',
      detail: `insufficient funds for gas * price + value: the payer ${SPONSOR} cannot cover the maximum cost ${sponsored.maxCost} wei (balance ${funds}, ${funds - sponsored.maxCost + drain.maxCost} reserved by its in-flight transactions)`,
    });
    // The other way round: what it sponsors is reserved, and its own transaction may not take it.
    const sponsoring = fresh();
    expect(await outcome(sponsored, { ledger: sponsoring, state }), 'a sponsored one').to.equal('admitted');
    expect(await outcome(drain, { ledger: sponsoring, state }), 'then the drain').to.deep.equal({
      reason: 'payer-balance',
      detail: `insufficient funds for gas * price + value: the payer ${SPONSOR} cannot cover the maximum cost ${drain.maxCost} wei and the ${funds - sponsored.maxCost} wei its frames send (balance ${funds}, ${sponsored.maxCost} reserved by its in-flight transactions)`,
    });
    // Value it can spare alongside is admitted.
    // (Its own gas as one more margin: the signature's zero bytes move its intrinsic gas a little.)
    expect(
      await outcome(sponsorsOwn(funds - sponsored.maxCost - 2n * drain.maxCost), { ledger: sponsoring, state }),
      'what is left',
    ).to.equal('admitted');
  });

  describe('a pending EIP-7702 authorization counts as code (issue 36)', () => {
    const OTHER_KEY = `0x${'00'.repeat(31)}03`;
    const other = { key: OTHER_KEY, address: new Wallet(OTHER_KEY).address.toLowerCase() };
    const BACKER_KEY = `0x${'00'.repeat(31)}05`;
    const backer = new Wallet(BACKER_KEY).address.toLowerCase();
    const accounts = {
      [SENDER]: { nonce: STATE_NONCE, balance: RICH },
      [other.address]: { nonce: STATE_NONCE, balance: 0n },
      [SPONSOR]: { nonce: 0n, balance: RICH },
      [backer]: { nonce: 0n, balance: RICH },
    };
    const state = fakeStateAt(HEAD, accounts);
    const fresh = () => new MemoryLedger({ duplicateWindowMs: 1_000, verdictTtlMs: 1_000, maxEntries: 100, skipAfterBlocks: 3n });

    it('holds a code-less sponsor with an authorization pending to one sponsored transaction at a time (paymaster-pending)', async () => {
      const ledger = fresh();
      expect(await outcome(await delegation(BACKER_KEY, [SPONSOR_KEY]), { ledger, state }), 'the authorization').to.equal('admitted');
      expect(await outcome(sponsoredFrame(), { ledger, state }), 'first sponsored').to.equal('admitted');
      expect(await outcome(sponsoredFrame(other), { ledger, state }), 'second sponsored').to.deep.equal({
        reason: 'paymaster-pending',
        detail: `the paymaster ${SPONSOR} already pays for 1 pending transaction: a sponsor with code takes one at a time (EIP-8141 mempool rules); retry once it is included`,
      });
      // Without the authorization, the same two are admitted (a code-less sponsor, as its funds allow).
      const plain = fresh();
      expect(await outcome(sponsoredFrame(), { ledger: plain, state }), 'control, first').to.equal('admitted');
      expect(await outcome(sponsoredFrame(other), { ledger: plain, state }), 'control, second').to.equal('admitted');
    });

    it("refuses a frame transaction while its sender's authorization is pending (authorization-pending), and admits it once that is gone", async () => {
      const ledger = fresh();
      const authorization = await delegation(BACKER_KEY, [SENDER_KEY]);
      const { release } = await admit(authorization, { ledger, state });
      expect(await outcome(selfFrame(), { ledger, state })).to.deep.equal({
        reason: 'authorization-pending',
        detail: `the sender ${SENDER} has an EIP-7702 authorization pending, which gives it code: its frame transaction waits until that is included (EIP-8141 mempool rules)`,
      });
      await release!();
      expect(await outcome(selfFrame(), { ledger, state }), 'released').to.equal('admitted');
    });

    it("admits a standard transaction while its sender's authorization is pending: the rule is the frame pool's", async () => {
      const ledger = fresh();
      await admit(await delegation(BACKER_KEY, [SENDER_KEY]), { ledger, state });
      expect(await outcome(await standardTx(STATE_NONCE + 1n), { ledger, state })).to.equal('admitted');
    });

    it("refuses an authorization of a sponsor paying for others' pending transactions (sponsor-pending), not of one paying only for its own", async () => {
      const ledger = fresh();
      expect(await outcome(sponsoredFrame(), { ledger, state }), 'the sponsor pays for a user').to.equal('admitted');
      expect(await outcome(await delegation(BACKER_KEY, [OTHER_KEY, SPONSOR_KEY]), { ledger, state })).to.deep.equal({
        reason: 'sponsor-pending',
        detail: `an authorization delegates ${SPONSOR}, which pays for others' transactions pending: code would change how it approves them; retry once they are included`,
      });
      const own = fresh();
      expect(await outcome(sponsorsOwn(1n), { ledger: own, state }), 'its own transaction').to.equal('admitted');
      expect(await outcome(await delegation(BACKER_KEY, [SPONSOR_KEY]), { ledger: own, state }), 'then the authorization').to.equal(
        'admitted',
      );
    });
  });

  it('refuses a frame transaction whose expiry no block after the head can meet (at or before its timestamp)', async () => {
    const t = HEAD.timestamp;
    expect(await outcome(selfFrame({ deadline: t - 1n })), 'deadline = timestamp - 1').to.deep.equal({
      reason: 'expiry-invalid',
      detail: 'the transaction expires at 1699999999, and the next block comes after the latest (1700000000)',
    });
    expect(await outcome(selfFrame({ deadline: t })), 'deadline = timestamp').to.deep.equal({
      reason: 'expiry-invalid',
      detail: 'the transaction expires at 1700000000, and the next block comes after the latest (1700000000)',
    });
    expect(await outcome(selfFrame({ deadline: t + 1n })), 'deadline = timestamp + 1').to.equal('admitted');
    expect(await outcome(selfFrame()), 'no expiry frame').to.equal('admitted');
  });

  it('refuses a second transaction with a nonce already in flight for the sender (nonce-in-flight)', async () => {
    const ledger = new FakeLedger();
    const first = selfFrame();
    // Same sender and nonce, another fee: another hash (a replacement attempt).
    const replacement = selfFrame({ maxFee: 3_000_000_000n });
    expect(replacement.hash).to.not.equal(first.hash);
    // A cap high enough that only the nonce can refuse it.
    const limits = { ...LIMITS, frameInFlightCap: 4 };

    expect(await outcome(first, { ledger, limits })).to.equal('admitted');
    expect(await outcome(replacement, { ledger, limits })).to.deep.equal({
      reason: 'nonce-in-flight',
      detail: 'a transaction with nonce 5 from this sender is already in flight',
    });
    expect(await outcome(await standardTx(STATE_NONCE), { ledger, limits }), 'standard, same nonce').to.deep.equal({
      reason: 'nonce-in-flight',
      detail: 'a transaction with nonce 5 from this sender is already in flight',
    });
    expect(await outcome(await standardTx(STATE_NONCE + 1n), { ledger, limits }), 'standard, next nonce').to.equal('admitted');
    expect(ledger.held(SENDER)).to.deep.equal([5n, 6n]);
  });

  it('refuses a nonce more than nonce_gap_max ahead of the state nonce, and admits one exactly that far (nonce-gap)', async () => {
    expect(await outcome(await standardTx(STATE_NONCE + 64n)), 'state nonce + 64').to.equal('admitted');
    expect(await outcome(await standardTx(STATE_NONCE + 65n)), 'state nonce + 65').to.deep.equal({
      reason: 'nonce-gap',
      detail: "nonce too high: nonce 70 is more than 64 ahead of the sender's state nonce 5",
    });
  });

  it('refuses a max fee below the head base fee, and admits one equal to it (fee-too-low)', async () => {
    const atBaseFee = { ...HEAD, baseFee: 2_000_000_000n };
    expect(await outcome(selfFrame(), { head: atBaseFee, state: fakeStateAt(atBaseFee) }), 'max fee = base fee').to.equal('admitted');
    const above = { ...HEAD, baseFee: 2_000_000_001n };
    expect(await outcome(selfFrame(), { head: above, state: fakeStateAt(above) }), 'max fee = base fee - 1').to.deep.equal({
      reason: 'fee-too-low',
      detail: 'max fee per gas less than block base fee: max fee per gas 2000000000 is below the current base fee 2000000001',
    });
  });

  it('refuses a standard transaction its sender cannot pay as insufficient-funds, counting what its in-flight ones reserve', async () => {
    const ledger = new FakeLedger();
    const first = await standardTx(STATE_NONCE);
    const second = await standardTx(STATE_NONCE + 1n);
    const state = fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: first.maxCost + second.maxCost - 1n } });
    expect(await outcome(first, { state, ledger })).to.equal('admitted');
    expect(await outcome(second, { state, ledger })).to.deep.equal({
      reason: 'insufficient-funds',
      detail:
        `insufficient funds for gas * price + value: the payer ${SENDER} cannot cover the maximum cost ${second.maxCost} wei ` +
        `(balance ${first.maxCost + second.maxCost - 1n}, ${first.maxCost} reserved by its in-flight transactions)`,
    });
  });

  it('answers a refusal for funds that rests on in-flight reservations without caching it, one that rests on the balance alone as cacheable', async () => {
    const thrown = async (sub: Submission, state: HeadState, ledger: Ledger) => {
      try {
        await checkAdmission(sub, HEAD, state, ledger, LIMITS);
      } catch (err) {
        return err;
      }
      throw new Error('admitted');
    };
    const first = await standardTx(STATE_NONCE);
    const second = await standardTx(STATE_NONCE + 1n);
    const ledger = new FakeLedger();
    const short = fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: first.maxCost + second.maxCost - 1n } });
    expect(await outcome(first, { state: short, ledger })).to.equal('admitted');
    expect(await thrown(second, short, ledger), 'others reserve').to.be.instanceOf(InFlightRefusal);
    const alone = await thrown(first, fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: first.maxCost - 1n } }), new FakeLedger());
    expect(alone, 'nothing else reserved').to.be.instanceOf(Refusal).and.not.instanceOf(InFlightRefusal);
  });

  it('reserves, for a frame transaction its sender pays for, the value its SENDER frames send beside the maximum cost', async () => {
    const sub = selfFrame();
    const state = fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: sub.maxCost } });
    expect(await outcome(sub, { state })).to.deep.equal({
      reason: 'payer-balance',
      detail:
        `insufficient funds for gas * price + value: the payer ${SENDER} cannot cover the maximum cost ${sub.maxCost} wei ` +
        `and the 1 wei its frames send (balance ${sub.maxCost})`,
    });
    expect(await outcome(sub, { state: fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: sub.maxCost + 1n } }) })).to.equal('admitted');
  });

  it("asks the payer's reservations at the head it judges the transaction at", async () => {
    const ledger = new FakeLedger();
    const later = { ...HEAD, number: HEAD.number + 7n };
    const state = fakeStateAt(later, { [SENDER]: { nonce: STATE_NONCE, balance: 0n }, [SPONSOR]: { nonce: 0n, balance: RICH } });
    expect(await outcome(sponsoredFrame(), { head: later, state, ledger })).to.equal('admitted');
    // The sender's too: its SENDER frame sends value while another pays (refuseSponsorDrain).
    expect(ledger.reservedAsked).to.deep.equal([
      [SENDER, 107n],
      [SPONSOR, 107n],
    ]);
  });

  describe("a sponsored frame transaction is judged on the sponsor's balance", () => {
    const sub = sponsoredFrame();

    it('names the sponsor as payer', () => {
      expect(sub.payer).to.equal(SPONSOR);
      expect(sub.sender).to.equal(SENDER);
    });

    it("admits it when the sponsor holds exactly the maximum cost, whatever the sender's balance", async () => {
      const state = fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: 0n }, [SPONSOR]: { nonce: 0n, balance: sub.maxCost } });
      expect(await outcome(sub, { state })).to.equal('admitted');
    });

    it('refuses it when the sponsor holds one wei less, however rich the sender (payer-balance)', async () => {
      const state = fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: RICH }, [SPONSOR]: { nonce: 0n, balance: sub.maxCost - 1n } });
      expect(await outcome(sub, { state })).to.deep.equal({
        reason: 'payer-balance',
        detail:
          `insufficient funds for gas * price + value: the payer ${SPONSOR} cannot cover the maximum cost ${sub.maxCost} wei ` +
          `(balance ${sub.maxCost - 1n})`,
      });
    });

    it('gives the slot back when it refuses for funds, so the same transaction is admitted once the sponsor is funded', async () => {
      const ledger = new FakeLedger();
      const poor = fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: RICH }, [SPONSOR]: { nonce: 0n, balance: 0n } });
      expect(await outcome(sub, { state: poor, ledger })).to.have.property('reason', 'payer-balance');
      expect(ledger.held(SENDER), 'slots after the refusal').to.deep.equal([]);
      const funded = fakeState({ [SENDER]: { nonce: STATE_NONCE, balance: 0n }, [SPONSOR]: { nonce: 0n, balance: sub.maxCost } });
      expect(await outcome(sub, { state: funded, ledger })).to.equal('admitted');
    });
  });

  describe('the frame in-flight cap', () => {
    const limits = { ...LIMITS, frameInFlightCap: 2 };

    /** A ledger where the sender already has `count` standard transactions in flight (nonces 6, 7, …). */
    async function withInFlight(count: number) {
      const ledger = new FakeLedger();
      const releases: Release[] = [];
      for (let i = 1; i <= count; i++) {
        const { outcome: result, release } = await admit(await standardTx(STATE_NONCE + BigInt(i)), { ledger, limits });
        expect(result, `standard transaction ${i}`).to.equal('admitted');
        releases.push(release!);
      }
      return { ledger, releases };
    }

    const capped = { reason: 'in-flight-cap', detail: 'too many in-flight transactions for the sender (cap 2)' };

    it('admits a frame transaction with cap - 1 in flight', async () => {
      const { ledger } = await withInFlight(1);
      expect(await outcome(selfFrame(), { ledger, limits })).to.equal('admitted');
    });

    it('refuses a frame transaction with cap or cap + 1 in flight (in-flight-cap)', async () => {
      expect(await outcome(selfFrame(), { ledger: (await withInFlight(2)).ledger, limits }), 'cap in flight').to.deep.equal(capped);
      expect(await outcome(selfFrame(), { ledger: (await withInFlight(3)).ledger, limits }), 'cap + 1 in flight').to.deep.equal(capped);
    });

    it('holds standard transactions to the general cap, not the frame cap', async () => {
      const { ledger } = await withInFlight(3);
      expect(await outcome(await standardTx(STATE_NONCE), { ledger, limits })).to.equal('admitted');
    });

    it('admits the next frame transaction once a released slot brings the count below the cap', async () => {
      const { ledger, releases } = await withInFlight(2);
      expect(await outcome(selfFrame(), { ledger, limits }), 'before the release').to.deep.equal(capped);
      await releases[1]!();
      expect(ledger.held(SENDER), 'slots after releasing nonce 7').to.deep.equal([6n]);
      expect(await outcome(selfFrame(), { ledger, limits }), 'after the release').to.equal('admitted');
    });
  });

  describe('slot release', () => {
    it('releases only the slot it was given: a replacement refused for its nonce does not free the admitted one', async () => {
      const ledger = new FakeLedger();
      const { release } = await admit(selfFrame(), { ledger, limits: LIMITS });
      expect(await outcome(selfFrame({ maxFee: 3_000_000_000n }), { ledger, limits: LIMITS })).to.have.property(
        'reason',
        'nonce-in-flight',
      );
      expect(ledger.held(SENDER)).to.deep.equal([5n]);
      await release!();
      expect(ledger.held(SENDER)).to.deep.equal([]);
      expect(await outcome(selfFrame({ maxFee: 3_000_000_000n }), { ledger, limits: LIMITS })).to.equal('admitted');
    });
  });
});
