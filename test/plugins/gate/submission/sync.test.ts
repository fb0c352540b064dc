import { expect } from 'chai';
import type { GateOptions } from '../../../../plugins/gate/options.js';
import { HeadState } from '../../../../plugins/gate/head/state.js';
import { rawParams, receiptOf, syncTimeoutOf } from '../../../../plugins/gate/submission/sync.js';
import { CLOSED, Facts } from '../../../../src/facts.js';
import { Upstream } from '../../../../src/upstream.js';
import { startStubEl, type StubEl } from '../../../../support/stub-el.js';
import { within } from '../../../../support/within.js';

const RAW = '0x02f86a';
const HASH = `0x${'a5'.repeat(32)}`;
/** The gate's defaults (config: sync_timeout_ms 2000, sync_timeout_max_ms 10000). */
const OPTIONS = { syncTimeoutMs: 2_000, syncTimeoutMaxMs: 10_000 } as GateOptions;
/** EIP-7966: code 4, a timeout message, the transaction hash as data. */
const TIMEOUT = {
  error: { code: 4, message: 'the transaction was ordered but not included within the timeout; wait for its receipt', data: HASH },
};
const RECEIPT = { transactionHash: HASH, blockNumber: '0x66', status: '0x1', gasUsed: '0x5208', logs: [] };

const answer = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });
const hex = (n: bigint) => `0x${n.toString(16)}`;

describe('gate: eth_sendRawTransactionSync (EIP-7966)', () => {
  describe('rawParams: the params read as the raw transaction', () => {
    it('drops the timeout of eth_sendRawTransactionSync, leaving the params it was given unchanged', () => {
      const params = Object.freeze([RAW, 5_000]);
      expect(rawParams(params, 'eth_sendRawTransactionSync')).to.deep.equal([RAW]);
      expect(params).to.deep.equal([RAW, 5_000]);
    });

    it('keeps one param of eth_sendRawTransactionSync as it is', () => {
      const params = [RAW];
      expect(rawParams(params, 'eth_sendRawTransactionSync')).to.equal(params);
    });

    for (const [label, params, method] of [
      ['three params of eth_sendRawTransactionSync', [RAW, 5_000, 'x'], 'eth_sendRawTransactionSync'],
      ['no params of eth_sendRawTransactionSync', [], 'eth_sendRawTransactionSync'],
      ['object params of eth_sendRawTransactionSync', { raw: RAW, timeout: 5_000 }, 'eth_sendRawTransactionSync'],
      ['object params shaped like a two-element array', { 0: RAW, 1: 5_000, length: 2 }, 'eth_sendRawTransactionSync'],
      ['two params of eth_sendRawTransaction (it takes no timeout)', [RAW, 5_000], 'eth_sendRawTransaction'],
    ] as const) {
      it(`leaves ${label} as they are, for readRawTransaction to refuse`, () => {
        expect(rawParams(params, method)).to.equal(params);
      });
    }
  });

  describe('syncTimeoutOf: a positive integer up to sync_timeout_max_ms, otherwise the default', () => {
    for (const [asked, expected] of [
      [5_000, 5_000],
      [1, 1],
      [10_000, 10_000],
      [10_001, 2_000],
      [0, 2_000],
      [-1, 2_000],
      [1.5, 2_000],
      ['5000', 2_000],
      ['0x1388', 2_000],
      [null, 2_000],
      [Number.MAX_SAFE_INTEGER, 2_000],
    ] as const) {
      it(`reads a timeout of ${JSON.stringify(asked)} as ${expected} ms`, () => {
        expect(syncTimeoutOf([RAW, asked], OPTIONS)).to.equal(expected);
      });
    }

    it('takes the default when no timeout is given, or the params are not an array', () => {
      expect([syncTimeoutOf([RAW], OPTIONS), syncTimeoutOf(undefined, OPTIONS), syncTimeoutOf({ 1: 5_000 }, OPTIONS)]).to.deep.equal([
        2_000, 2_000, 2_000,
      ]);
    });

    it('reads the bounds from the options it is given', () => {
      const options = { syncTimeoutMs: 300, syncTimeoutMaxMs: 400 } as GateOptions;
      expect([syncTimeoutOf([RAW, 400], options), syncTimeoutOf([RAW, 401], options)]).to.deep.equal([400, 300]);
    });
  });

  describe('receiptOf: waits for the receipt head by head, over a real HeadState', () => {
    let el: StubEl;
    let upstream: Upstream;
    /** The EL's head number at the n-th (1-based) eth_getBlockByNumber; tests set it. */
    let headAt: (read: number) => bigint;
    /** Whether the EL has the receipt at a head. */
    let includedAt: (head: bigint) => boolean;
    /** Called on each eth_getBlockByNumber, after the head is chosen. */
    let onHeadRead: (read: number) => void;
    let reads: number;
    let height: bigint;

    const calls = (method: string) => el.received.filter((r) => r.method === method);
    // head_cache_ms 0: every look at the head reads it, so the counts below are the loop's own.
    const stateOver = () => new HeadState(upstream, 0);

    before(async () => {
      el = await startStubEl({
        eth_getBlockByNumber: (id) => {
          reads += 1;
          height = headAt(reads);
          onHeadRead(reads);
          return answer(id, { number: hex(height), timestamp: '0x6553f100', baseFeePerGas: '0x7', miner: `0x${'00'.repeat(20)}` });
        },
        eth_getTransactionReceipt: (id) => answer(id, includedAt(height) ? RECEIPT : null),
      });
      upstream = new Upstream({ url: el.url, connections: 2, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
    });
    after(async () => {
      await upstream?.close();
      await el?.close();
    });
    beforeEach(() => {
      el.received.length = 0;
      reads = 0;
      headAt = () => 100n;
      includedAt = () => false;
      onHeadRead = () => {};
    });

    it('answers the receipt at once when the EL already has it', async () => {
      includedAt = () => true;
      expect(await within(5_000, 'receipt', receiptOf(HASH, 10_000, new Facts(), stateOver(), upstream))).to.deep.equal({
        result: RECEIPT,
      });
      expect(calls('eth_getTransactionReceipt').map((r) => r.params)).to.deep.equal([[HASH]]);
      expect(calls('eth_getBlockByNumber')).to.have.length(1);
    });

    it('answers the receipt at the first head where it exists, asking once per new head, not once per look', async () => {
      // Three looks at head 100, three at 101, then 102, where the receipt is.
      headAt = (read) => (read <= 3 ? 100n : read <= 6 ? 101n : 102n);
      includedAt = (head) => head >= 102n;
      expect(await within(10_000, 'receipt', receiptOf(HASH, 10_000, new Facts(), stateOver(), upstream))).to.deep.equal({
        result: RECEIPT,
      });
      expect(calls('eth_getBlockByNumber')).to.have.length(7);
      expect(calls('eth_getTransactionReceipt').map((r) => r.params)).to.deep.equal([[HASH], [HASH], [HASH]]);
    });

    it('stops at the timeout with EIP-7966 error 4 carrying the transaction hash', async () => {
      const started = Date.now();
      expect(await within(5_000, 'timeout', receiptOf(HASH, 200, new Facts(), stateOver(), upstream))).to.deep.equal(TIMEOUT);
      expect(Date.now() - started).to.be.at.least(200);
      // The head never moved: the receipt was asked for once.
      expect(calls('eth_getTransactionReceipt')).to.have.length(1);
      expect(calls('eth_getBlockByNumber').length).to.be.at.least(2);
    });

    it('stops once the client is gone (CLOSED), without another look at the head', async () => {
      const facts = new Facts();
      onHeadRead = (read) => {
        if (read === 2) facts.set(CLOSED, true);
      };
      expect(await within(5_000, 'closed', receiptOf(HASH, 60_000, facts, stateOver(), upstream))).to.deep.equal(TIMEOUT);
      expect(calls('eth_getBlockByNumber')).to.have.length(2);
      expect(calls('eth_getTransactionReceipt')).to.have.length(1);
    });

    it('reads nothing for a client already gone', async () => {
      const facts = new Facts();
      facts.set(CLOSED, true);
      expect(await within(5_000, 'closed', receiptOf(HASH, 60_000, facts, stateOver(), upstream))).to.deep.equal(TIMEOUT);
      expect(el.received).to.deep.equal([]);
    });

    it('ends an error answer to eth_getTransactionReceipt in error 4 with the hash, asking again only at a new head', async () => {
      const failing = await startStubEl({
        eth_getBlockByNumber: (id) => answer(id, { number: '0x64', timestamp: '0x1' }),
        eth_getTransactionReceipt: (id) =>
          JSON.stringify({ jsonrpc: '2.0', id, error: { code: 4444, message: 'pruned history', data: 'x' } }),
      });
      const reads = new Upstream({ url: failing.url, connections: 1, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
      try {
        expect(await within(5_000, 'timeout', receiptOf(HASH, 200, new Facts(), new HeadState(reads, 0), reads))).to.deep.equal(TIMEOUT);
        expect(failing.received.filter((r) => r.method === 'eth_getTransactionReceipt')).to.have.length(1);
      } finally {
        await reads.close();
        await failing.close();
      }
    });

    it('ends in error 4 with the hash when the EL cannot be read at all, not in an internal error', async () => {
      const failing = await startStubEl({
        eth_getBlockByNumber: (id) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'syncing' } }),
      });
      const reads = new Upstream({ url: failing.url, connections: 1, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
      try {
        expect(await within(5_000, 'timeout', receiptOf(HASH, 200, new Facts(), new HeadState(reads, 0), reads))).to.deep.equal(TIMEOUT);
        expect(failing.received.filter((r) => r.method === 'eth_getBlockByNumber').length).to.be.at.least(2);
      } finally {
        await reads.close();
        await failing.close();
      }
    });
  });
});
