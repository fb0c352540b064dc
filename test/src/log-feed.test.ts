import { expect } from 'chai';
import { HeadFeed } from '../../src/head-feed.js';
import { LogFeed } from '../../src/log-feed.js';
import { isLogFilterError, readLogFilter, type LogFilter } from '../../src/log-filter.js';
import { Upstream } from '../../src/upstream.js';
import { call, receiptOf } from '../../support/http.js';
import { DEV_ADDRESS } from '../../support/keys.js';
import { deployEmitter, EMITTED, emit, topicOf } from '../../support/log-emitter.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { useAnvil } from '../helpers/el.js';

interface Log {
  address: string;
  topics: string[];
  blockHash: string;
  blockNumber: string;
  transactionHash: string;
  removed: boolean;
}

function filter(raw: unknown): LogFilter {
  const read = readLogFilter(raw);
  if (isLogFilterError(read)) throw new Error(read.message);
  return read;
}

/** Polls `until` every 20 ms, at most 5 s. */
async function eventually(until: () => boolean, what: string): Promise<void> {
  for (let i = 0; !until(); i++) {
    if (i > 250) throw new Error(`${what}: not within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('log feed: one follower of the EL for every logs subscriber (log-feed.ts)', () => {
  const anvil = useAnvil();
  let el: StubEl;
  let upstream: Upstream;
  let heads: HeadFeed;
  let feed: LogFeed;
  let emitters: string[];
  before(async () => {
    el = await startStubEl({}, { fallthrough: anvil.current.url });
    upstream = new Upstream({ url: el.url, connections: 2, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
    emitters = [await deployEmitter(anvil.current.url), await deployEmitter(anvil.current.url)];
  });
  beforeEach(() => {
    heads = new HeadFeed(() => upstream, 20);
    feed = new LogFeed(heads, () => upstream);
  });
  afterEach(() => heads.close());
  after(async () => {
    await upstream.close();
    await el.close();
  });

  /** Subscribes, then waits until the feed follows the head (logs before that are not sent). */
  const listen = async (criteria: unknown) => {
    const logs: Log[] = [];
    const stop = feed.subscribe(filter(criteria), (texts) => logs.push(...texts.map((text) => JSON.parse(text) as Log)));
    const before = el.received.length;
    await eventually(() => el.received.slice(before).some((r) => r.method === 'eth_getBlockByNumber'), 'the first poll');
    await new Promise((resolve) => setTimeout(resolve, 60));
    return { logs, stop };
  };

  it("sends each matching log once, as the EL wrote it, with one eth_getLogs per block whatever the subscribers' number", async () => {
    const [a, b] = emitters as [string, string];
    const byA = await listen({ address: a });
    const byTopic = await listen({ topics: [EMITTED, [topicOf(2), topicOf(3)]] });
    const crowd = await Promise.all(Array.from({ length: 20 }, () => listen({})));
    const asked = () => el.received.filter((r) => r.method === 'eth_getLogs').length;
    const askedBefore = asked();
    const hashes: string[] = [];
    for (const [emitter, n] of [
      [a, 1],
      [b, 2],
      [a, 3],
    ] as const) {
      const hash = await emit(anvil.current.url, emitter, n);
      await receiptOf(anvil.current.url, hash);
      hashes.push(hash);
    }
    await eventually(() => crowd.every((c) => c.logs.length === 3), 'every log to the crowd');
    expect(byA.logs.map((l) => l.topics[1])).to.deep.equal([topicOf(1), topicOf(3)]);
    expect(byTopic.logs.map((l) => [l.address, l.topics[1]])).to.deep.equal([
      [b, topicOf(2)],
      [a, topicOf(3)],
    ]);
    // Byte for byte what eth_getLogs answers for the block.
    const direct = await call<Log[]>(anvil.current.url, 'eth_getLogs', [{ blockHash: byA.logs[0]!.blockHash }]);
    expect(crowd[0]!.logs[0]).to.deep.equal(direct[0]);
    expect(crowd[0]!.logs.map((l) => l.transactionHash)).to.deep.equal(hashes);
    expect(asked() - askedBefore, 'one eth_getLogs per block for 22 subscribers').to.equal(3);
    for (const listener of [byA, byTopic, ...crowd]) listener.stop();
    expect(feed.size).to.equal(0);
    // A poll already on its way when the last listener left may still arrive: two poll periods.
    await new Promise((resolve) => setTimeout(resolve, 40));
    const idle = el.received.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(el.received.length - idle, 'nobody listens: nothing asked').to.equal(0);
  });

  it('announces the logs of blocks a reorg replaced with removed: true, oldest first, then the new branch', async () => {
    const [a] = emitters as [string];
    const { logs, stop } = await listen({ address: a });
    for (const n of [10, 11]) await receiptOf(anvil.current.url, await emit(anvil.current.url, a, n));
    await eventually(() => logs.length === 2, 'the two logs');
    const replaced = logs.map((l) => l.blockHash);
    // anvil_reorg replaces the last two blocks with two new ones, the second holding another emission.
    const nonce = await call<string>(anvil.current.url, 'eth_getTransactionCount', [DEV_ADDRESS, 'latest']);
    const tx = { from: DEV_ADDRESS, to: a, data: topicOf(12), gas: '0x30000', nonce: BigInt(nonce) - 2n };
    await call(anvil.current.url, 'anvil_reorg', [2, [[{ ...tx, nonce: `0x${tx.nonce.toString(16)}` }, 1]]]);
    await eventually(() => logs.length === 5, 'two removed and one new');
    expect(logs.slice(2).map((l) => [l.topics[1], l.removed])).to.deep.equal([
      [topicOf(10), true],
      [topicOf(11), true],
      [topicOf(12), false],
    ]);
    expect(logs.slice(2, 4).map((l) => l.blockHash)).to.deep.equal(replaced);
    expect(replaced).to.not.include(logs[4]!.blockHash);
    stop();
  });

  it('announces as removed what followed a block the head went back to', async () => {
    const [a] = emitters as [string];
    const { logs, stop } = await listen({ address: a });
    await receiptOf(anvil.current.url, await emit(anvil.current.url, a, 20));
    await eventually(() => logs.length === 1, 'the log');
    await call(anvil.current.url, 'anvil_mine', ['0x1']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await call(anvil.current.url, 'anvil_rollback', [2]);
    await eventually(() => logs.length === 2, 'the removal');
    expect([logs[1]!.topics[1], logs[1]!.removed, logs[1]!.blockHash]).to.deep.equal([topicOf(20), true, logs[0]!.blockHash]);
    // The block gone back to was the head when the subscriber came: its logs are not sent again.
    await receiptOf(anvil.current.url, await emit(anvil.current.url, a, 21));
    await eventually(() => logs.length >= 3, 'the next log');
    expect(logs.map((l) => [l.topics[1], l.removed])).to.deep.equal([
      [topicOf(20), false],
      [topicOf(20), true],
      [topicOf(21), false],
    ]);
    stop();
  });
});
