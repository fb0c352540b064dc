/**
 * Issue 36 replayed on the devnet. B1: a code-less sponsor sends its funds away in a transaction
 * of its own while it sponsors others. Before, every sponsored transaction was admitted and none
 * included (the payer could not pay); now what the drain sends is reserved with it, so what it
 * sponsors is refused up front, or the drain is. B2: one source polls the head for a public
 * paymaster's one pending slot; before, another user of it was admitted 6-13% of its tries.
 */
import { expect } from 'chai';
import { decodeFrameTransaction, frameGas, NEW_ACCOUNT_STATE_GAS } from '../../protocol/index.js';
import { secp256k1Entry, secpAccount, signed, type FrameTxFields } from '../../support/frames.js';
import { walletFor } from '../../support/keys.js';
import { call, postFresh, receiptOf, rpc } from '../../support/http.js';
import { APPROVE_1 } from '../../support/verify-code.js';
import { useDevnet } from '../helpers/devnet.js';

const FEES: [bigint, bigint, bigint] = [0n, 3_000_000_000n, 0n];
const RECIPIENT = '0x00000000000000000000000000000000000b1b1b';
const FUNDS = 10n ** 18n;
const SPONSORED = 6;

type Account = ReturnType<typeof secpAccount>;

/**
 * A frame transaction of `sender` sending `value` to RECIPIENT, paid by itself (`payer`
 * undefined), by a code-less sponsor (an account: it signs entry 1), or by a paymaster with code
 * (an address). Fees as FEES; state gas for a sender or a recipient that may not exist yet.
 */
function frameTx(sender: Account, payer?: Account | string, value = 0n, nonce = 0n): string {
  const recipientGas = value > 0n ? NEW_ACCOUNT_STATE_GAS : 0n;
  const transfer = { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value, stateGas: recipientGas };
  if (payer === undefined) {
    const own: FrameTxFields = {
      sender: sender.address,
      nonce,
      fees: FEES,
      signatures: [{ scheme: 1 }],
      frames: [{ mode: 1, flags: 3, executionGas: 10_000n }, transfer],
    };
    return signed(own, [sender.sign]);
  }
  const target = typeof payer === 'string' ? payer : payer.address;
  const fields: FrameTxFields = {
    sender: sender.address,
    nonce,
    fees: FEES,
    signatures: typeof payer === 'string' ? [{ scheme: 1 }] : [{ scheme: 1 }, { scheme: 1, signer: target }],
    frames: [
      { mode: 1, flags: 2, executionGas: 10_000n },
      // Approving payment creates the sender if it does not exist: EIP-8037 state gas.
      { mode: 1, flags: 1, target, executionGas: 10_000n, stateGas: NEW_ACCOUNT_STATE_GAS },
      transfer,
    ],
  };
  return signed(fields, typeof payer === 'string' ? [sender.sign] : [sender.sign, payer.sign]);
}

/** What the endpoint answered a submission. */
async function send(url: string, raw: string) {
  return JSON.parse((await rpc(url, 'eth_sendRawTransaction', [raw])).text) as {
    result?: string;
    error?: { data?: { reason?: string; pending?: string } };
  };
}

describe('sponsors: a code-less sponsor cannot drain itself under what it sponsors (issue 36, B1, on the devnet)', () => {
  const devnet = useDevnet();

  const sponsoredBy = (sponsor: Account) => frameTx(secpAccount(), sponsor);
  /** The sponsor's own transaction, paid by itself, sending what `value` makes of its max cost. */
  const drainOf = (sponsor: Account, value: (maxCost: bigint) => bigint) => {
    const maxCost = frameGas(decodeFrameTransaction(frameTx(sponsor, undefined, 1n))).maxGas * FEES[1];
    return frameTx(sponsor, undefined, value(maxCost));
  };
  const sendRaw = (raw: string) => send(devnet.current.ingress.url, raw);
  const funded = async () => {
    const sponsor = secpAccount();
    await call(devnet.current.anvil.url, 'anvil_setBalance', [sponsor.address, `0x${FUNDS.toString(16)}`]);
    return sponsor;
  };

  it('refuses what it sponsors past what its own draining transaction leaves; the drain is included, nothing skipped', async () => {
    const sponsor = await funded();
    // All it has but twice its own gas (its signature's bytes move the gas a little).
    const drain = await sendRaw(drainOf(sponsor, (maxCost) => FUNDS - 2n * maxCost));
    expect(drain.result, JSON.stringify(drain)).to.be.a('string');
    const answers = await Promise.all(Array.from({ length: SPONSORED }, () => sendRaw(sponsoredBy(sponsor))));
    // What it keeps back (its own gas, twice) may pay for one at a time; the rest are refused up
    // front (each one included frees its room at the next head: how many get in follows the blocks).
    const admitted = answers.filter((a) => a.result !== undefined).map((a) => a.result!);
    expect(answers.filter((a) => a.result === undefined).map((a) => a.error?.data?.reason)).to.deep.equal(
      Array(SPONSORED - admitted.length).fill('payer-balance'),
    );
    expect(admitted.length).to.be.below(SPONSORED);
    const receipt = await receiptOf<{ status: string }>(devnet.current.ingress.url, drain.result!);
    expect(receipt.status).to.equal('0x1');
    // Nothing admitted is skipped: each is included (a receipt), paid by the sponsor.
    for (const hash of admitted)
      expect((await receiptOf<{ payer: string }>(devnet.current.ingress.url, hash)).payer).to.equal(sponsor.address);
  });

  it('refuses the drain while what it sponsors is pending, and every sponsored transaction is included', async () => {
    const sponsor = await funded();
    const hashes = [];
    for (let i = 0; i < SPONSORED; i++) {
      const answer = await sendRaw(sponsoredBy(sponsor));
      expect(answer.result, JSON.stringify(answer)).to.be.a('string');
      hashes.push(answer.result!);
    }
    const drain = await sendRaw(drainOf(sponsor, (maxCost) => FUNDS - 2n * maxCost));
    expect(drain.error?.data?.reason).to.equal('payer-balance');
    const receipts = await Promise.all(hashes.map((hash) => receiptOf<{ status: string }>(devnet.current.ingress.url, hash)));
    expect(receipts.map((r) => r.status)).to.deep.equal(Array(SPONSORED).fill('0x1'));
  });

  it('refuses a sponsor its value sent in a transaction another pays for while it pays for others (sponsor-pending)', async () => {
    const [sponsor, backer] = [await funded(), await funded()];
    const sponsored = await sendRaw(sponsoredBy(sponsor));
    expect(sponsored.result, JSON.stringify(sponsored)).to.be.a('string');
    const away = await sendRaw(frameTx(sponsor, backer, FUNDS / 2n));
    expect(away.error?.data?.reason, JSON.stringify(away)).to.equal('sponsor-pending');
    expect((await receiptOf<{ status: string }>(devnet.current.ingress.url, sponsored.result!)).status).to.equal('0x1');
  });

  it("names the sender's pending transaction a second frame transaction waits for (sender-pending)", async () => {
    const account = await funded();
    const first = await sendRaw(frameTx(account, undefined, 1n));
    expect(first.result, JSON.stringify(first)).to.be.a('string');
    const second = await sendRaw(frameTx(account, undefined, 1n, 1n));
    expect(second.error?.data).to.deep.include({ reason: 'sender-pending', pending: first.result });
  });
});

describe('sponsors: a pending EIP-7702 authorization counts as code (issue 36, item 3, on the devnet)', () => {
  const devnet = useDevnet();
  let accounts = 0;
  const sendRaw = (raw: string) => send(devnet.current.ingress.url, raw);
  /** A funded account, as a frame transaction signer and as the ethers wallet of the same key. */
  const funded = async () => {
    const wallet = walletFor(`delegated account ${accounts++}`);
    await call(devnet.current.anvil.url, 'anvil_setBalance', [wallet.address, `0x${FUNDS.toString(16)}`]);
    const account = { address: wallet.address.toLowerCase(), sign: (digest: string) => secp256k1Entry(wallet.privateKey, digest) };
    return { account, wallet };
  };
  /** A type 0x04 transaction of a funded backer whose one authorization `authority` signs. */
  const delegationBy = async (authority: Awaited<ReturnType<typeof funded>>) => {
    const { wallet } = await funded();
    const authorization = await authority.wallet.authorize({ address: RECIPIENT, nonce: 0, chainId: 8141 });
    return wallet.signTransaction({
      type: 4,
      chainId: 8141,
      nonce: 0,
      to: RECIPIENT,
      gasLimit: 100_000,
      maxFeePerGas: FEES[1],
      maxPriorityFeePerGas: 0n,
      authorizationList: [authorization],
    });
  };

  it("refuses an authorization of a sponsor paying for others' pending transactions (sponsor-pending); what it sponsors is included", async () => {
    const sponsor = await funded();
    const sponsored = await sendRaw(frameTx(secpAccount(), sponsor.account));
    expect(sponsored.result, JSON.stringify(sponsored)).to.be.a('string');
    const authorization = await sendRaw(await delegationBy(sponsor));
    expect(authorization.error?.data?.reason, JSON.stringify(authorization)).to.equal('sponsor-pending');
    const receipt = await receiptOf<{ status: string; payer: string }>(devnet.current.ingress.url, sponsored.result!);
    expect([receipt.status, receipt.payer]).to.deep.equal(['0x1', sponsor.account.address]);
  });

  it("holds a frame transaction while its sender's authorization is pending (authorization-pending)", async () => {
    const account = await funded();
    const authorization = await sendRaw(await delegationBy(account));
    expect(authorization.result, JSON.stringify(authorization)).to.be.a('string');
    const frame = await sendRaw(frameTx(account.account, undefined, 1n));
    expect(frame.error?.data?.reason, JSON.stringify(frame)).to.equal('authorization-pending');
    expect((await receiptOf<{ status: string }>(devnet.current.ingress.url, authorization.result!)).status).to.equal('0x1');
  });
});

describe("sponsors: a public paymaster's one pending slot shared between sources (issue 36, B2, on the devnet)", () => {
  const devnet = useDevnet();
  const PAYMASTER = '0x00000000000000000000000000000000000b2b2b';
  const BLOCKS = 8;

  const submitFrom = async (address: string) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [frameTx(secpAccount(), PAYMASTER)] });
    const { json } = await postFresh(devnet.current.ingress.url, body, address);
    return json.result !== undefined;
  };
  const head = async () => BigInt(await call<string>(devnet.current.anvil.url, 'eth_blockNumber', []));
  const nextHead = async (after: bigint) => {
    for (let h = await head(); h <= after; h = await head()) await new Promise((resolve) => setTimeout(resolve, 10));
    return head();
  };

  it('admits another source at least half of its tries while one source takes the slot at every new head', async () => {
    await call(devnet.current.anvil.url, 'anvil_setCode', [PAYMASTER, APPROVE_1]);
    await call(devnet.current.anvil.url, 'anvil_setBalance', [PAYMASTER, `0x${FUNDS.toString(16)}`]);
    let polling = true;
    // The poller: a submission at each new head, the moment it is seen.
    const poller = (async () => {
      for (let seen = await head(); polling; seen = await nextHead(seen)) await submitFrom('127.0.0.2');
    })();
    let tries = 0;
    let admitted = 0;
    for (let seen = await head(), block = 0; block < BLOCKS; block++, seen = await nextHead(seen)) {
      // The user tries once a block, a little after the poller.
      await new Promise((resolve) => setTimeout(resolve, 30));
      tries++;
      if (await submitFrom('127.0.0.3')) admitted++;
    }
    polling = false;
    await poller;
    expect(admitted * 2, `${admitted} of ${tries}`).to.be.at.least(tries);
  });
});
