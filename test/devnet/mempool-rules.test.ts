/**
 * Issue 27's attack rows replayed against the devnet (anvil, the node stand-in ordering FIFO,
 * the frame runner, the ingress with its shipped gate options): what an attacker did before the
 * gate applied EIP-8141's public-mempool rules, and that it no longer gets anything ordered that
 * the chain then skips. Skips are read where the chain counts them, `svc_dropStats`.
 */
import { expect } from 'chai';
import { EXPIRY_VERIFIER } from '../../protocol/index.js';
import { id, keccak256, Wallet } from 'ethers';
import { startDevnet, type Devnet } from '../../devnet/devnet.js';
import { createLogger } from '../../src/log.js';
import { RECIPIENT, secp256k1Entry, signed, type FrameTxFields } from '../../support/frames.js';
import { call, receiptOf, rpc } from '../../support/http.js';
import { DEV_KEYS, devTransfer } from '../../support/keys.js';
import { APPROVE_1 } from '../../support/verify-code.js';
import { OPERATOR_TOKEN } from '../helpers/ingress.js';
import { until } from '../helpers/until.js';

const FEES: [bigint, bigint, bigint] = [0n, 2_000_000_000n, 0n];
/** EIP-8037: APPROVE creating a sender that does not exist yet. */
const NEW_ACCOUNT = 183_600n;

const wallet = (label: string) => new Wallet(id(`mempool rules ${label}`));
const signer = (w: Wallet) => (digest: string) => secp256k1Entry(w.privateKey, digest);

describe('devnet: the public-mempool rules hold against the attacks that beat them (issue 27)', () => {
  let devnet: Devnet;
  let url: string;
  const send = async (raw: string) => JSON.parse((await rpc(url, 'eth_sendRawTransaction', [raw])).text);
  const skips = async () => (await call<{ el: { total: number; nonce_too_high: number } }>(url, 'svc_dropStats')).el;
  /** Waits for a block holding a transfer: the node closes the next one `blockIntervalMs` later at the earliest. */
  const blockClosed = async () => {
    const nonce = Number(await call<string>(url, 'eth_getTransactionCount', [new Wallet(DEV_KEYS[4]!).address, 'latest']));
    const raw = await devTransfer(DEV_KEYS[4]!, nonce);
    expect(await send(raw)).to.have.property('result');
    await receiptOf(url, keccak256(raw));
  };
  const fund = (address: string, wei: bigint) => call(devnet.anvil.url, 'anvil_setBalance', [address, `0x${wei.toString(16)}`]);

  before(async () => {
    process.env.SVC_OPERATOR_TOKEN = OPERATOR_TOKEN;
    devnet = await startDevnet(
      // Blocks at least two seconds apart: what is sent right after a block is pending together.
      { port: 0, metricsPort: 0, node: { commitIntervalMs: 40, blockIntervalMs: 2_000, heartbeatCommits: 25, checkpointEvery: 5 } },
      createLogger('error', () => {}),
    );
    url = devnet.ingress.url;
  });
  after(() => devnet?.stop());

  it('N3: a contract paymaster pays for one pending transaction at a time, so one drain skips at most one (was x264)', async () => {
    const paymaster = `0x${'00'.repeat(18)}a1a1`;
    await call(devnet.anvil.url, 'anvil_setCode', [paymaster, APPROVE_1]);
    await fund(paymaster, 10n ** 18n);
    const before = await skips();
    // Fresh senders that do not exist: the paymaster's frame creates each (state gas), pays for all.
    const sponsored = (label: string) => {
      const sender = wallet(`N3 ${label}`);
      const fields: FrameTxFields = {
        sender: sender.address.toLowerCase(),
        frames: [
          { mode: 1, flags: 2, executionGas: 10_000n },
          { mode: 1, flags: 1, target: paymaster, executionGas: 30_000n, stateGas: NEW_ACCOUNT },
          { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n },
        ],
        signatures: [{ scheme: 1 }],
        fees: FEES,
      };
      return signed(fields, [signer(sender)]);
    };
    const raws = Array.from({ length: 8 }, (_, i) => sponsored(String(i)));
    // A block just closed: the next one is two seconds away, and the first sponsored transaction pending till then.
    await blockClosed();
    expect(await send(raws[0]!)).to.have.property('result', keccak256(raws[0]!));
    // One after another (a source queues at most four judgements in the pool at once).
    for (const raw of raws.slice(1)) expect((await send(raw)).error.data).to.deep.equal({ reason: 'paymaster-pending' });
    // The drain: the paymaster's funds gone before its pending transaction runs.
    await fund(paymaster, 0n);
    const resolved = await until(
      async () => ({
        receipt: await call(url, 'eth_getTransactionReceipt', [keccak256(raws[0]!)]),
        skipped: (await skips()).total - before.total,
      }),
      ({ receipt, skipped }) => receipt !== null || skipped > 0,
      'the pending transaction to run or be skipped',
    );
    // It runs two seconds later at the earliest: the drained paymaster cannot pay, and the chain skips it, alone.
    expect(resolved, 'skipped per drain').to.deep.equal({ receipt: null, skipped: 1 });
    // Funded again, the paymaster pays for the next sender once the gate has seen the first done.
    await fund(paymaster, 10n ** 18n);
    const next = await until(
      () => send(raws[1]!),
      (answer) => 'result' in answer,
      'the paymaster to be free again',
    );
    expect(next.result).to.equal(keccak256(raws[1]!));
    expect((await receiptOf(url, keccak256(raws[1]!))).status).to.equal('0x1');
    expect((await skips()).total - before.total, 'transactions the chain skipped').to.equal(resolved.skipped);
  });

  it('N4 and DV-7: a deadline at the head timestamp, which no block can meet, is refused and holds none of its sponsor', async () => {
    const sponsor = wallet('N4 sponsor');
    // Enough for one transaction at this fee cap: the attacker's, had it been admitted, would lock out the victim.
    const maxCost = (fields: FrameTxFields) =>
      fields.frames.reduce((sum, f) => sum + f.executionGas + (f.stateGas ?? 0n), 100_000n) * fields.fees![1];
    const sponsoredBy = (sender: Wallet, deadline?: bigint): FrameTxFields => ({
      sender: sender.address.toLowerCase(),
      frames: [
        ...(deadline === undefined
          ? []
          : [{ mode: 1, flags: 0, target: EXPIRY_VERIFIER, executionGas: 2_651n, data: `0x${deadline.toString(16).padStart(16, '0')}` }]),
        { mode: 1, flags: 2, executionGas: 10_000n },
        { mode: 1, flags: 1, target: sponsor.address.toLowerCase(), executionGas: 10_000n },
        { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n },
      ],
      signatures: [{ scheme: 1 }, { scheme: 1, signer: sponsor.address.toLowerCase() }],
      fees: FEES,
    });
    const attacker = wallet('N4 attacker');
    const victim = wallet('N4 victim');
    await fund(attacker.address, 1n);
    await fund(victim.address, 1n);
    await fund(sponsor.address, maxCost(sponsoredBy(victim)) + maxCost(sponsoredBy(victim)) / 2n);
    const head = await call<{ timestamp: string }>(url, 'eth_getBlockByNumber', ['latest', false]);
    const doomed = signed(sponsoredBy(attacker, BigInt(head.timestamp)), [signer(attacker), signer(sponsor)]);
    expect((await send(doomed)).error.data).to.deep.equal({ reason: 'expiry-invalid' });
    const raw = signed(sponsoredBy(victim), [signer(victim), signer(sponsor)]);
    expect(await send(raw)).to.have.property('result', keccak256(raw));
    expect((await receiptOf(url, keccak256(raw))).status).to.equal('0x1');
  });

  it('N7: nonces ahead of the state nonce are refused unless every nonce between is pending: zero nonce_too_high skips', async () => {
    const key = DEV_KEYS[3]!;
    const from = new Wallet(key);
    const transfer = (nonce: number) => devTransfer(key, nonce);
    const before = await skips();
    const state = Number(await call<string>(url, 'eth_getTransactionCount', [from.address, 'latest']));
    for (let ahead = 1; ahead <= 16; ahead++) {
      expect((await send(await transfer(state + ahead))).error.data, `nonce state + ${ahead}`).to.deep.equal({
        reason: 'nonce-not-contiguous',
      });
    }
    // A contiguous run is taken whole, in order, and executed.
    const run = [await transfer(state), await transfer(state + 1), await transfer(state + 2)];
    for (const raw of run) expect(await send(raw)).to.have.property('result', keccak256(raw));
    for (const raw of run) expect((await receiptOf(url, keccak256(raw))).status).to.equal('0x1');
    const after = await skips();
    expect([after.nonce_too_high, after.total]).to.deep.equal([before.nonce_too_high, before.total]);
  });
});
