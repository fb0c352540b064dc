import { expect } from 'chai';
import { CHAIN } from '../../protocol/chain.js';
import { evaluateDirectly } from '../../protocol/direct-evaluation.js';
import { Refusal } from '../../protocol/refusal.js';
import { decodeFrameTransaction, type FrameTransaction } from '../../protocol/frame-codec.js';
import { RECIPIENT, secp256k1Entry, signed, type FrameFields, type FrameTxFields } from '../../support/frames.js';
import { walletFor } from '../../support/keys.js';
import { decodeCode } from '../../protocol/code-entry.js';
import { EXPIRY_VERIFIER_CODE } from '../../protocol/frame-checks.js';
import type { FrameFacts } from '../../protocol/mempool/policy.js';
import { OverlayStateManager, type StateReader } from '../../protocol/evm/index.js';
import { validatePrefix } from '../../protocol/mempool/index.js';

const EXPIRY_VERIFIER = '0x0000000000000000000000000000000000008141';
const FACTORY = '0x000000000000000000000000000000000000f00d';
const MAX_COST = 10n ** 15n;

const senderKey = walletFor('gate: direct evaluation sender');
const sponsorKey = walletFor('gate: direct evaluation sponsor');
const SENDER = senderKey.address.toLowerCase();
const SPONSOR = sponsorKey.address.toLowerCase();
const signSender = (digest: string) => secp256k1Entry(senderKey.privateKey, digest);
const signSponsor = (digest: string) => secp256k1Entry(sponsorKey.privateKey, digest);

/** The expiry frame with a far deadline. */
const expiry = (executionGas: bigint): FrameFields => ({
  mode: 1,
  flags: 0,
  target: EXPIRY_VERIFIER,
  executionGas,
  data: '0x00000000ffffffff',
});

const send: FrameFields = { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 1n };

/** [..., self, send] signed by the sender; `before` goes ahead of self (an expiry or a deploy frame). */
function selfTx(options: { verifyGas?: bigint; stateGas?: bigint; before?: FrameFields } = {}): FrameTransaction {
  const fields: FrameTxFields = {
    sender: SENDER,
    frames: [{ mode: 1, flags: 3, executionGas: options.verifyGas ?? 10_000n, stateGas: options.stateGas ?? 0n }, send],
    signatures: [{ scheme: 1 }],
  };
  if (options.before !== undefined) fields.frames.unshift(options.before);
  return decodeFrameTransaction(signed(fields, [signSender]));
}

/** [only, pay → sponsor, send]: the sender approves execution, the sponsor (entry 1) pays. */
function sponsoredTx(
  options: { payGas?: bigint; sponsor?: string; sponsorEntrySigner?: string; signSponsorWith?: (digest: string) => string } = {},
): FrameTransaction {
  const sponsor = options.sponsor ?? SPONSOR;
  const fields: FrameTxFields = {
    sender: SENDER,
    frames: [
      { mode: 1, flags: 2, executionGas: 10_000n },
      { mode: 1, flags: 1, target: sponsor, executionGas: options.payGas ?? 10_000n },
      { ...send, value: 0n },
    ],
    signatures: [{ scheme: 1 }, { scheme: 1, signer: options.sponsorEntrySigner ?? sponsor }],
  };
  return decodeFrameTransaction(signed(fields, [signSender, options.signSponsorWith ?? signSponsor]));
}

/** What direct evaluation made of the prefix: 'valid', or the refusal as a client reads it; and whose balances it read. */
async function evaluate(
  tx: FrameTransaction,
  prefixEnd: number,
  options: { balance?: bigint; senderExists?: boolean } = {},
): Promise<{ outcome: string; balancesRead: string[] }> {
  const balancesRead: string[] = [];
  const balanceOf = async (address: string) => {
    balancesRead.push(address);
    return options.balance ?? MAX_COST;
  };
  try {
    await evaluateDirectly({
      tx,
      prefixEnd,
      maxCost: MAX_COST,
      senderExists: options.senderExists ?? true,
      balanceOf,
    });
    return { outcome: 'valid', balancesRead };
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    expect(err.reason).to.equal('verify-rejected');
    return { outcome: err.detail, balancesRead };
  }
}

describe('gate: direct evaluation of protocol-defined frames (EIP-8141; frame-transactions.md section 7)', () => {
  it("prices account access as EIP-2929 does, and the expiry verifier's passing path at 51 gas", () => {
    expect([CHAIN.coldAccountAccessGas, CHAIN.warmAccountAccessGas, CHAIN.expiryVerifierGas]).to.deep.equal([2_600n, 100n, 51n]);
  });

  describe("the entry access charge, from each frame's own execution limit", () => {
    it("a self frame pays the warm sender's 100: takes 100, refuses 99 as out of gas", async () => {
      expect(await evaluate(selfTx({ verifyGas: 100n }), 0)).to.deep.equal({ outcome: 'valid', balancesRead: [SENDER] });
      expect((await evaluate(selfTx({ verifyGas: 99n }), 0)).outcome).to.equal(
        'VERIFY frame 0: out of gas (the frame needs 100, its limit is 99)',
      );
    });

    it("a pay frame pays the cold sponsor's 2 600: takes 2 600, refuses 2 599 as out of gas", async () => {
      expect(await evaluate(sponsoredTx({ payGas: 2_600n }), 1)).to.deep.equal({ outcome: 'valid', balancesRead: [SPONSOR] });
      expect((await evaluate(sponsoredTx({ payGas: 2_599n }), 1)).outcome).to.equal(
        'VERIFY frame 1: out of gas (the frame needs 2600, its limit is 2599)',
      );
    });

    it("the expiry frame pays its cold target plus the verifier's 51: takes 2 651, refuses 2 650", async () => {
      expect(await evaluate(selfTx({ before: expiry(2_651n) }), 1)).to.deep.equal({ outcome: 'valid', balancesRead: [SENDER] });
      expect((await evaluate(selfTx({ before: expiry(2_650n) }), 1)).outcome).to.equal(
        'VERIFY frame 0: out of gas (the frame needs 2651, its limit is 2650)',
      );
    });

    it("a deploy frame pays its cold factory's 2 600 before anything else is judged", async () => {
      const deploy = (executionGas: bigint): FrameFields => ({ mode: 0, flags: 0, target: FACTORY, executionGas });
      expect((await evaluate(selfTx({ before: deploy(2_599n) }), 1)).outcome).to.equal(
        'deploy frame 0: out of gas (the frame needs 2600, its limit is 2599)',
      );
    });
  });

  it('refuses a deploy frame aimed at a code-less account: nothing is installed at the sender', async () => {
    const deploy: FrameFields = { mode: 0, flags: 0, target: FACTORY, executionGas: 2_600n };
    expect(await evaluate(selfTx({ before: deploy }), 1)).to.deep.equal({
      outcome: 'deploy frame 0: no code at the sender after deploy',
      balancesRead: [],
    });
  });

  it('judges the validation prefix only: frames after prefixEnd are not evaluated', async () => {
    const fields: FrameTxFields = {
      sender: SENDER,
      frames: [
        { mode: 1, flags: 3, executionGas: 100n },
        { mode: 2, flags: 0, target: FACTORY, executionGas: 0n },
      ],
      signatures: [{ scheme: 1 }],
    };
    expect((await evaluate(decodeFrameTransaction(signed(fields, [signSender])), 0)).outcome).to.equal('valid');
  });

  describe("the payer's balance (APPROVE's payment)", () => {
    it('takes a payer holding exactly the maximum cost and refuses one wei less as reverted', async () => {
      expect((await evaluate(selfTx(), 0, { balance: MAX_COST })).outcome).to.equal('valid');
      expect((await evaluate(selfTx(), 0, { balance: MAX_COST - 1n })).outcome).to.equal(
        'VERIFY frame 0: reverted (the payer cannot cover the maximum cost)',
      );
    });

    it("reads the sponsor's balance for [only, pay], never the sender's", async () => {
      expect(await evaluate(sponsoredTx(), 1, { balance: MAX_COST - 1n })).to.deep.equal({
        outcome: 'VERIFY frame 1: reverted (the payer cannot cover the maximum cost)',
        balancesRead: [SPONSOR],
      });
    });
  });

  describe('a sender that does not exist yet', () => {
    it('halts a self frame without the state gas to create it, as out of state gas', async () => {
      expect((await evaluate(selfTx(), 0, { senderExists: false })).outcome).to.equal(
        'VERIFY frame 0: out of state gas (creating the sender needs 183600 state gas, the frame has 0 left)',
      );
    });

    it('takes a self frame carrying 183 600 state gas', async () => {
      expect((await evaluate(selfTx({ stateGas: 183_600n }), 0, { senderExists: false })).outcome).to.equal('valid');
    });
  });

  it("refuses a pay frame whose entry 1 is not the sponsor's as reverted by default code", async () => {
    const tx = sponsoredTx({ sponsorEntrySigner: SENDER, signSponsorWith: signSender });
    expect((await evaluate(tx, 1)).outcome).to.equal(
      `VERIFY frame 1: reverted (default code: signature 1 must be a SECP256K1 or MLDSA65 entry of ${SPONSOR} over the signature hash)`,
    );
  });

  it('puts the frame index and the short cause in the refusal, the detail in brackets in its message only', async () => {
    let refusal: Refusal | undefined;
    try {
      await evaluateDirectly({
        tx: selfTx({ verifyGas: 99n }),
        prefixEnd: 0,
        maxCost: MAX_COST,
        senderExists: true,
        balanceOf: async () => MAX_COST,
      });
    } catch (err) {
      refusal = err as Refusal;
    }
    expect(refusal).to.be.instanceOf(Refusal);
    expect({ reason: refusal!.reason, extra: refusal!.extra }).to.deep.equal({
      reason: 'verify-rejected',
      extra: { frame: 0, cause: 'out of gas' },
    });
  });

  describe('holds the verdict of the EVM frame runner, which it stands in for (the same prefixes, one world)', () => {
    /** A world of code-less accounts: balances (absent: none), the expiry verifier's canonical code. */
    const both = async (tx: FrameTransaction, prefixEnd: number, balances: Record<string, bigint>) => {
      const balanceOf = async (address: string) => balances[address] ?? 0n;
      const direct = await outcomeOf(() =>
        evaluateDirectly({ tx, prefixEnd, maxCost: MAX_COST, senderExists: (balances[tx.sender] ?? 0n) > 0n, balanceOf }),
      );
      const reader: StateReader = {
        account: async (address) => ({ nonce: 0n, balance: await balanceOf(address) }),
        code: async (address) => decodeCode(address === EXPIRY_VERIFIER ? EXPIRY_VERIFIER_CODE : '0x'),
        storage: async () => `0x${'0'.repeat(64)}`,
      };
      const facts = { prefixEnd, maxCost: MAX_COST } as FrameFacts;
      const progress = { frame: 0, mode: 'VERIFY' as const };
      const state = new OverlayStateManager(reader, tx.sender);
      const evm = await outcomeOf(() => validatePrefix({ tx, facts, state, progress, checkBudget: () => {}, waiting: (work) => work }));
      return { direct, evm };
    };
    const funded = { [SENDER]: MAX_COST, [SPONSOR]: MAX_COST };
    const cases: Array<[string, FrameTransaction, number, Record<string, bigint>]> = [
      ['a self frame at its 100', selfTx({ verifyGas: 100n }), 0, funded],
      ['a self frame one gas short', selfTx({ verifyGas: 99n }), 0, funded],
      ["[only, pay] at the sponsor's cold 2 600", sponsoredTx({ payGas: 2_600n }), 1, funded],
      ['[only, pay] one gas short', sponsoredTx({ payGas: 2_599n }), 1, funded],
      ['the expiry frame at 2 651', selfTx({ before: expiry(2_651n) }), 1, funded],
      ['the expiry frame at 2 650', selfTx({ before: expiry(2_650n) }), 1, funded],
      [
        'a deploy frame aimed at a code-less account',
        selfTx({ before: { mode: 0, flags: 0, target: FACTORY, executionGas: 2_600n } }),
        1,
        funded,
      ],
      ['a payer one wei short', selfTx(), 0, { [SENDER]: MAX_COST - 1n }],
      ["a pay entry not the sponsor's", sponsoredTx({ sponsorEntrySigner: SENDER, signSponsorWith: signSender }), 1, funded],
      ['a sponsor paying for a sender that does not exist, without state gas', sponsoredTx(), 1, { [SPONSOR]: MAX_COST }],
    ];
    for (const [name, tx, prefixEnd, balances] of cases) {
      it(name, async () => {
        const { direct, evm } = await both(tx, prefixEnd, balances);
        expect(evm).to.equal(direct);
      });
    }
  });
});

async function outcomeOf(judge: () => Promise<void>): Promise<string> {
  try {
    await judge();
    return 'valid';
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return err.detail;
  }
}
