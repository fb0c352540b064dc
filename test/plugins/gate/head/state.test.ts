import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { Unavailable } from '../../../../plugins/gate/errors.js';
import { HeadState, type Head } from '../../../../plugins/gate/head/state.js';
import { Upstream } from '../../../../src/upstream.js';
import { startStubEl, type StubEl } from '../../../../support/stub-el.js';

const ALICE = `0x${'11'.repeat(20)}`;
const answer = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });
const hex = (n: bigint) => `0x${n.toString(16)}`;

describe('gate: head state', () => {
  let el: StubEl;
  let upstream: Upstream;
  /** The EL's latest block number; tests move it. */
  let height: bigint;
  let blockAnswer: (id: unknown) => string;

  const calls = (method: string) => el.received.filter((r) => r.method === method).length;

  before(async () => {
    el = await startStubEl({
      eth_getBlockByNumber: (id) => blockAnswer(id),
      eth_getTransactionCount: (id) => answer(id, '0x7'),
      eth_getBalance: (id) => answer(id, '0xde0b6b3a7640000'),
      eth_getCode: (id) => answer(id, '0xAB'),
      eth_getStorageAt: (id) => answer(id, `0x${'0'.repeat(62)}2A`),
    });
    upstream = new Upstream({ url: el.url, connections: 4, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
  });
  after(async () => {
    await upstream.close();
    await el.close();
  });
  beforeEach(() => {
    el.received.length = 0;
    height = 100n;
    blockAnswer = (id) =>
      answer(id, { number: hex(height), baseFeePerGas: '0x3b9aca00', timestamp: '0x6553f100', miner: `0x${'AB'.repeat(20)}` });
  });

  it('reads the latest block as a head, lower-casing the coinbase', async () => {
    const state = new HeadState(upstream, 60_000);
    expect(await state.latest()).to.deep.equal({
      number: 100n,
      baseFee: 1_000_000_000n,
      timestamp: 1_700_000_000n,
      coinbase: `0x${'ab'.repeat(20)}`,
    });
  });

  it('reads the latest block once per head_cache_ms, whoever asks', async () => {
    const state = new HeadState(upstream, 60_000);
    await Promise.all([state.latest(), state.latest()]);
    height = 101n;
    expect((await state.latest()).number).to.equal(100n);
    expect(calls('eth_getBlockByNumber')).to.equal(1);
  });

  it('fresh() reads now, concurrent callers sharing one read', async () => {
    const state = new HeadState(upstream, 60_000);
    await state.latest();
    height = 101n;
    const [a, b] = await Promise.all([state.fresh(), state.fresh()]);
    expect([a.number, b.number]).to.deep.equal([101n, 101n]);
    expect(calls('eth_getBlockByNumber')).to.equal(2);
  });

  it('after fresh() found a newer head, latest() answers it, and state reads stay cached at it', async () => {
    const state = new HeadState(upstream, 60_000);
    await state.latest();
    height = 101n;
    await state.fresh();
    const head = await state.latest();
    expect(head.number).to.equal(101n);
    await state.account(ALICE, head);
    await state.account(ALICE, await state.latest());
    expect(calls('eth_getTransactionCount')).to.equal(1);
    expect(calls('eth_getBlockByNumber')).to.equal(2);
  });

  it('reads an account, a code and a storage word once per head and key, at that head', async () => {
    const state = new HeadState(upstream, 60_000);
    const head = await state.latest();
    expect(await state.account(ALICE, head)).to.deep.equal({ nonce: 7n, balance: 10n ** 18n });
    expect(await state.account(ALICE, head)).to.deep.equal({ nonce: 7n, balance: 10n ** 18n });
    expect(await state.code(ALICE, head)).to.equal('0xab');
    const slot = `0x${'0'.repeat(63)}1`;
    expect(await state.storage(ALICE, slot, head)).to.equal(`0x${'0'.repeat(62)}2a`);
    expect(await state.storage(ALICE, slot, head)).to.equal(`0x${'0'.repeat(62)}2a`);
    expect(el.received.filter((r) => r.method !== 'eth_getBlockByNumber').map((r) => [r.method, r.params])).to.deep.equal([
      ['eth_getTransactionCount', [ALICE, '0x64']],
      ['eth_getBalance', [ALICE, '0x64']],
      ['eth_getCode', [ALICE, '0x64']],
      ['eth_getStorageAt', [ALICE, slot, '0x64']],
    ]);
  });

  it('decodes and hashes a code once per head and address: the same entry for every reader', async () => {
    const state = new HeadState(upstream, 60_000);
    const head = await state.latest();
    const entry = await state.codeEntry(ALICE, head);
    expect([Buffer.from(entry.bytes).toString('hex'), entry.hashHex]).to.deep.equal(['ab', keccak256('0xab')]);
    expect(await state.codeEntry(ALICE, head)).to.equal(entry);
    expect(calls('eth_getCode')).to.equal(1);
    height = 101n;
    expect(await state.codeEntry(ALICE, await state.fresh())).to.not.equal(entry);
  });

  it('reads again at a new head, and uncached at an older one', async () => {
    const state = new HeadState(upstream, 60_000);
    const at = (number: bigint): Head => ({ number, baseFee: 0n, timestamp: 0n, coinbase: ALICE });
    await state.code(ALICE, at(100n));
    await state.code(ALICE, at(101n));
    await state.code(ALICE, at(101n));
    await state.code(ALICE, at(100n));
    await state.code(ALICE, at(100n));
    expect(el.received.map((r) => (r.params as string[])[1])).to.deep.equal(['0x64', '0x65', '0x64', '0x64']);
  });

  it('forgets a failed read, so the next caller reads again', async () => {
    const state = new HeadState(upstream, 60_000);
    blockAnswer = (id) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } });
    const failure = await state.latest().catch((err: unknown) => err);
    expect(failure).to.be.instanceOf(Unavailable);
    expect((failure as Error).message).to.equal('eth_getBlockByNumber: header not found');
    blockAnswer = (id) => answer(id, { number: '0x65', timestamp: '0x1' });
    expect(await state.latest()).to.deep.equal({ number: 101n, baseFee: 0n, timestamp: 1n, coinbase: `0x${'00'.repeat(20)}` });
  });

  it('fails closed on a missing block, naming it', async () => {
    const state = new HeadState(upstream, 60_000);
    blockAnswer = (id) => answer(id, null);
    const failure = await state.latest().catch((err: unknown) => err);
    expect(failure).to.be.instanceOf(Unavailable);
    expect((failure as Error).message).to.equal('the EL returned no latest block');
  });
});
