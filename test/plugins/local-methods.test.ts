/**
 * local-methods on its own, against a real HTTP fake of the consensus node's local API
 * (node-api.md): what each node-local method asks the node, how the answer is shaped (spec 2.3,
 * 4.6), and what is refused before the node is asked. The same methods answered live through a
 * whole ingress and the devnet's stand-in are in test/devnet/devnet.test.ts; the operator token
 * itself is auth's (test/plugins/auth.test.ts).
 */
import { expect } from 'chai';
import { statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { localMethods } from '../../plugins/local-methods.js';
import { OptionsReader } from '../../src/config/reader.js';
import { errors, RpcFailure } from '../../src/errors.js';
import { Facts, OPERATOR } from '../../src/facts.js';
import { RequestTab } from '../../src/request-tab.js';
import type { Answer, RpcRequest } from '../../src/jsonrpc.js';
import { createLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import type { Plugin, RequestContext } from '../../src/plugin.js';
import { Upstream } from '../../src/upstream.js';
import { HANG, startStubEl, type StubEl } from '../../support/stub-el.js';
import { within } from '../../support/within.js';
import { pluginEnv } from '../helpers/plugin-env.js';

const log = createLogger('error');
const NOT_FOUND = { error: { code: -32601, message: 'the method does not exist/is not available' } };
const NODE_UNAVAILABLE = { code: -32603, message: 'node unavailable: the consensus node did not answer' };
const invalid = (why: string) => ({ error: { code: -32602, message: `invalid params: ${why}` } });

/** A JSON-RPC answer body from the fake node. */
const result = (value: unknown) => (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result: value });
const failure = (code: number, message: string) => (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });

const ctxOf = (method: string, params?: RpcRequest['params'], operator?: boolean): RequestContext => {
  const facts = new Facts();
  if (operator !== undefined) facts.set(OPERATOR, operator);
  const request = Object.freeze({ jsonrpc: '2.0' as const, id: 1, method, ...(params === undefined ? {} : { params }) });
  return { request, peer: { address: '127.0.0.1', headers: {} }, facts, tab: new RequestTab() };
};

/** What `handle` threw: an RpcFailure is how the plugin answers "node unavailable". */
async function failureOf(verdict: unknown): Promise<RpcFailure> {
  try {
    await verdict;
  } catch (err) {
    expect(err).to.be.instanceOf(RpcFailure);
    return err as RpcFailure;
  }
  throw new Error('expected the call to fail, and it answered');
}

describe('local-methods', () => {
  /** What the fake node answers, per method: emptied before each test, which sets what it needs. */
  const answers: Record<string, (id: unknown, params: unknown) => string> = {};
  let stub: StubEl;
  let node: Upstream;
  let metrics: Metrics;
  const plugins: Plugin[] = [];

  const plugin = async (options: Record<string, unknown> = {}) => {
    const created = await localMethods.create(
      localMethods.parseOptions(OptionsReader.of('plugins[0].local-methods', options)),
      pluginEnv(node, log, metrics),
    );
    plugins.push(created);
    return created;
  };
  const handle = (p: Plugin, method: string, params?: RpcRequest['params'], operator?: boolean) =>
    p.handle!(ctxOf(method, params, operator)) as Promise<Answer> | Answer;
  /** What the node was asked, in order. */
  const asked = () => stub.received.map(({ method, params }) => ({ method, params }));

  before(async () => {
    stub = await startStubEl(answers);
    node = new Upstream({ url: stub.url, connections: 2, headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 });
  });
  beforeEach(() => {
    for (const method of Object.keys(answers)) delete answers[method];
    stub.received.length = 0;
    metrics = new Metrics();
  });
  afterEach(async () => {
    for (const p of plugins.splice(0)) await p.close?.();
  });
  after(async () => {
    await node?.close();
    await stub?.close();
  });

  describe('options', () => {
    it('reads bootstrap_anchor false, no data_dir and a 200 ms newest-page cache by default', () => {
      expect(localMethods.parseOptions(OptionsReader.of('plugins[0].local-methods', null))).to.deep.equal({
        bootstrapAnchor: false,
        dataDir: undefined,
        newestPageCacheMs: 200,
      });
    });

    for (const [label, options, message] of [
      [
        'a bootstrap_anchor that is not a boolean',
        { bootstrap_anchor: 'yes' },
        'plugins[3].local-methods.bootstrap_anchor: must be true or false',
      ],
      ['an empty data_dir', { data_dir: '' }, 'plugins[3].local-methods.data_dir: must be a non-empty string'],
      [
        'a negative newest_page_cache_ms',
        { newest_page_cache_ms: -1 },
        'plugins[3].local-methods.newest_page_cache_ms: must be an integer >= 0',
      ],
      [
        'a newest_page_cache_ms over 5 s',
        { newest_page_cache_ms: 5_001 },
        'plugins[3].local-methods.newest_page_cache_ms: must be at most 5000',
      ],
    ] as const) {
      it(`refuses ${label}, naming the YAML path`, () => {
        expect(() => localMethods.parseOptions(OptionsReader.of('plugins[3].local-methods', options))).to.throw(message);
      });
    }

    it('starts without upstreams.node, its methods hidden (method not found), and says which', async () => {
      const lines: string[] = [];
      const env = {
        ...pluginEnv(
          node,
          createLogger('info', (line) => lines.push(line)),
          metrics,
        ),
        node: undefined,
      };
      const plugin = (await localMethods.create(localMethods.parseOptions(OptionsReader.of('local-methods', {})), env)) as Plugin;
      expect([...(plugin.hiddenMethods ?? [])]).to.have.members([
        'svc_getRecentCommits',
        'svc_dropStats',
        'svc_nodeHealth',
        'svc_getCheckpointChain',
        'svc_getJournalTail',
      ]);
      expect(plugin.methods).to.equal(undefined);
      expect(lines.map((line) => JSON.parse(line).msg)).to.deep.equal([
        'local-methods: no upstreams.node (the consensus node\'s local API): its methods answer "method not found"',
      ]);
    });
  });

  describe('its surface', () => {
    it('names the five node-local methods, and hides the bootstrap ones unless it is an anchor', async () => {
      const plain = await plugin();
      expect([...plain.methods!]).to.have.members([
        'svc_getRecentCommits',
        'svc_dropStats',
        'svc_nodeHealth',
        'svc_getCheckpointChain',
        'svc_getJournalTail',
      ]);
      expect([...plain.hiddenMethods!]).to.have.members(['svc_getCheckpointChain', 'svc_getJournalTail']);
      const anchor = await plugin({ bootstrap_anchor: true });
      expect(anchor.methods!.size).to.equal(5);
      expect(anchor.hiddenMethods).to.equal(undefined);
    });

    it("passes methods named like Object's own members rather than calling them", async () => {
      const p = await plugin();
      for (const method of ['constructor', 'toString', 'hasOwnProperty', '__proto__'])
        expect(await handle(p, method, []), method).to.equal(undefined);
      expect(asked()).to.deep.equal([]);
    });
  });

  describe('svc_getRecentCommits', () => {
    const page = {
      commits: [
        {
          index: 7,
          digest: '0x07',
          leaderAuthority: 0,
          leaderRound: 9,
          leaderDigest: '0x09',
          timestampMs: 1_700_000_000_000,
          blocks: 1,
          transactions: 0,
          elBlocks: [],
        },
      ],
    };
    beforeEach(() => {
      answers.svc_getRecentCommits = result(page);
    });

    for (const [label, params, sent] of [
      ['no params', undefined, [null, 64]],
      ['empty params', [], [null, 64]],
      ['[null]', [null], [null, 64]],
      ['a since alone', [5], [5, 64]],
      ['since 0', [0, 3], [0, 3]],
      ['a since and a limit', [5, 7], [5, 7]],
      ['a limit of 128', [null, 128], [null, 128]],
      ['a limit over 128', [null, 129], [null, 128]],
      ['a since with a limit of 10,000', [12, 10_000], [12, 128]],
    ] as const) {
      it(`asks the node for ${JSON.stringify(sent)} given ${label}, and answers its page unchanged`, async () => {
        const p = await plugin();
        expect(await handle(p, 'svc_getRecentCommits', params)).to.deep.equal({ result: page });
        expect(asked()).to.deep.equal([{ method: 'svc_getRecentCommits', params: sent }]);
      });
    }

    for (const [label, params, why] of [
      ['params that are an object', { since: 1 }, 'expected [since, limit]'],
      ['three params', [null, 1, 2], 'expected [since, limit]'],
      ['a fractional since', [1.5], 'since must be null or a non-negative integer commit index'],
      ['a negative since', [-1, 5], 'since must be null or a non-negative integer commit index'],
      ['a hex since', ['0x1'], 'since must be null or a non-negative integer commit index'],
      ['a since past 2^53', [2 ** 53], 'since must be null or a non-negative integer commit index'],
      ['a boolean since', [false], 'since must be null or a non-negative integer commit index'],
      ['a zero limit', [null, 0], 'limit must be a positive integer'],
      ['a negative limit', [3, -5], 'limit must be a positive integer'],
      ['a fractional limit', [null, 2.5], 'limit must be a positive integer'],
      ['a limit as a string', [null, '10'], 'limit must be a positive integer'],
      ['a null limit', [null, null], 'limit must be a positive integer'],
    ] as const) {
      it(`refuses ${label} with -32602 "invalid params: ${why}", asking the node nothing`, async () => {
        const p = await plugin();
        expect(await handle(p, 'svc_getRecentCommits', params)).to.deep.equal(invalid(why));
        expect(asked()).to.deep.equal([]);
      });
    }

    it("passes the node's own error answer on unchanged", async () => {
      answers.svc_getRecentCommits = failure(-32000, 'commits before 40 are pruned');
      const p = await plugin();
      expect(await handle(p, 'svc_getRecentCommits', [3, 2])).to.deep.equal({
        error: { code: -32000, message: 'commits before 40 are pruned' },
      });
    });

    it('shares the newest page, per clamped limit, among callers within newest_page_cache_ms', async () => {
      const p = await plugin({ newest_page_cache_ms: 5_000 });
      const concurrent = await Promise.all([handle(p, 'svc_getRecentCommits', []), handle(p, 'svc_getRecentCommits', [null, 64])]);
      expect(concurrent).to.deep.equal([{ result: page }, { result: page }]);
      expect(await handle(p, 'svc_getRecentCommits', [null])).to.deep.equal({ result: page });
      // 500 and 128 are the same page once clamped; 10 is another.
      await handle(p, 'svc_getRecentCommits', [null, 500]);
      await handle(p, 'svc_getRecentCommits', [null, 128]);
      await handle(p, 'svc_getRecentCommits', [null, 10]);
      expect(asked()).to.deep.equal([
        { method: 'svc_getRecentCommits', params: [null, 64] },
        { method: 'svc_getRecentCommits', params: [null, 128] },
        { method: 'svc_getRecentCommits', params: [null, 10] },
      ]);
    });

    it('asks the node for every page after a since: only the newest page is shared', async () => {
      const p = await plugin({ newest_page_cache_ms: 5_000 });
      await handle(p, 'svc_getRecentCommits', [5, 7]);
      await handle(p, 'svc_getRecentCommits', [5, 7]);
      expect(asked()).to.have.length(2);
    });

    it('asks again for the newest page once newest_page_cache_ms has passed, and every time with 0', async () => {
      const shortLived = await plugin({ newest_page_cache_ms: 30 });
      // Asked in one turn: shared, however slow the machine.
      await Promise.all([handle(shortLived, 'svc_getRecentCommits', []), handle(shortLived, 'svc_getRecentCommits', [])]);
      expect(asked()).to.have.length(1);
      await sleep(40);
      await handle(shortLived, 'svc_getRecentCommits', []);
      expect(asked()).to.have.length(2);

      const uncached = await plugin({ newest_page_cache_ms: 0 });
      await Promise.all([handle(uncached, 'svc_getRecentCommits', []), handle(uncached, 'svc_getRecentCommits', [])]);
      expect(asked()).to.have.length(4);
    });

    it('does not keep a failed newest page: the next caller asks the node again', async () => {
      answers.svc_getRecentCommits = () => 'not json';
      const p = await plugin({ newest_page_cache_ms: 5_000 });
      expect((await failureOf(handle(p, 'svc_getRecentCommits', []))).rpc).to.deep.equal(NODE_UNAVAILABLE);
      answers.svc_getRecentCommits = result(page);
      expect(await handle(p, 'svc_getRecentCommits', [])).to.deep.equal({ result: page });
      expect(asked()).to.have.length(2);
    });
  });

  describe('svc_dropStats', () => {
    const driver = {
      forced_txs_total: 10,
      forced_txs_dropped_total: 2,
      blocks_with_drops_total: 1,
      skip_all_dropped_total: 0,
      finalizer_rejected_skips_total: 3,
      idle_heartbeat_blocks_total: 4,
    };
    const el = {
      fee_cap_too_low: 1,
      gas_overflow: 0,
      insufficient_funds: 5,
      nonce_too_high: 1,
      nonce_too_low: 0,
      other: 0,
      size_overflow: 0,
      total: 7,
    };
    const idleIngress = {
      txs_sequenced_total: 0,
      own_blocks_gc_total: 0,
      txs_gc_dropped_total: 0,
      status_lost_total: 0,
      status_watchers: 0,
    };

    it("asks the node with [] and answers its driver and el groups with this process's ingress group, in spec order", async () => {
      answers.svc_dropStats = result({ driver, el });
      const p = await plugin();
      const answer = (await handle(p, 'svc_dropStats', [])) as { result: Record<string, Record<string, number>> };
      expect(answer).to.deep.equal({ result: { driver, ingress: idleIngress, el } });
      expect(Object.keys(answer.result)).to.deep.equal(['driver', 'ingress', 'el']);
      expect(Object.keys(answer.result.driver!)).to.deep.equal(Object.keys(driver));
      expect(Object.keys(answer.result.el!)).to.deep.equal([
        'fee_cap_too_low',
        'gas_overflow',
        'insufficient_funds',
        'nonce_too_high',
        'nonce_too_low',
        'other',
        'size_overflow',
        'total',
      ]);
      expect(asked()).to.deep.equal([{ method: 'svc_dropStats', params: [] }]);
    });

    it('counts in ingress.txs_sequenced_total what this process sequenced, read at each call', async () => {
      answers.svc_dropStats = result({ driver, el });
      const p = await plugin();
      metrics.sequenced();
      metrics.sequenced();
      expect(await handle(p, 'svc_dropStats')).to.deep.equal({
        result: { driver, ingress: { ...idleIngress, txs_sequenced_total: 2 }, el },
      });
      metrics.sequenced();
      expect(await handle(p, 'svc_dropStats')).to.have.nested.property('result.ingress.txs_sequenced_total', 3);
    });

    it('reports every spec counter as an integer: missing or non-integer ones as 0, unknown ones left out', async () => {
      answers.svc_dropStats = result({
        driver: {
          forced_txs_total: 10,
          forced_txs_dropped_total: '2',
          blocks_with_drops_total: 1.5,
          skip_all_dropped_total: null,
          not_a_counter: 9,
        },
        el: { total: 7, nonce_too_high: 3, gas_overflow: 2 ** 53 },
        ingress: { txs_sequenced_total: 99, status_watchers: 4 },
        extra: { anything: 1 },
      });
      const p = await plugin();
      expect(await handle(p, 'svc_dropStats')).to.deep.equal({
        result: {
          driver: {
            forced_txs_total: 10,
            forced_txs_dropped_total: 0,
            blocks_with_drops_total: 0,
            skip_all_dropped_total: 0,
            finalizer_rejected_skips_total: 0,
            idle_heartbeat_blocks_total: 0,
          },
          ingress: idleIngress,
          el: {
            fee_cap_too_low: 0,
            gas_overflow: 0,
            insufficient_funds: 0,
            nonce_too_high: 3,
            nonce_too_low: 0,
            other: 0,
            size_overflow: 0,
            total: 7,
          },
        },
      });
    });

    it('answers the whole record, zeroed, when the node answers null or groups that are not objects', async () => {
      const zeroes = (keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, 0]));
      const all = {
        driver: zeroes(Object.keys(driver)),
        ingress: idleIngress,
        el: zeroes(Object.keys(el)),
      };
      const p = await plugin();
      for (const nodeResult of [null, { driver: 5, el: 'x' }]) {
        answers.svc_dropStats = result(nodeResult);
        expect(await handle(p, 'svc_dropStats'), JSON.stringify(nodeResult)).to.deep.equal({ result: all });
      }
    });

    it("passes the node's error answer on unchanged, without an ingress group", async () => {
      answers.svc_dropStats = failure(-32000, 'driver not started');
      const p = await plugin();
      expect(await handle(p, 'svc_dropStats')).to.deep.equal({ error: { code: -32000, message: 'driver not started' } });
    });
  });

  describe('svc_nodeHealth', () => {
    const gauges = { latestHandledCommit: 120, latestCertifiedCheckpoint: 23, observerStranded: 0 };
    beforeEach(() => {
      answers.svc_nodeHealth = result(gauges);
    });

    for (const [label, operator] of [
      ['without the operator fact', undefined],
      ['with the operator fact false', false],
    ] as const) {
      it(`answers ${label} with the very error of an unknown method, asking the node nothing`, async () => {
        const p = await plugin({ data_dir: tmpdir() });
        const answer = (await handle(p, 'svc_nodeHealth', [], operator)) as { error: unknown };
        expect(answer).to.deep.equal(NOT_FOUND);
        // One factory for both conditions, so they cannot drift apart.
        expect(answer.error).to.equal(errors.methodNotFound());
        expect(asked()).to.deep.equal([]);
      });
    }

    it("answers the operator the node's gauges with dataDirDisk null when no data_dir is set", async () => {
      const p = await plugin();
      expect(await handle(p, 'svc_nodeHealth', [], true)).to.deep.equal({ result: { ...gauges, dataDirDisk: null } });
      expect(asked()).to.deep.equal([{ method: 'svc_nodeHealth', params: [] }]);
    });

    it("adds the data_dir's disk usage as this process measures it", async () => {
      const dir = tmpdir();
      const p = await plugin({ data_dir: dir });
      const answer = (await handle(p, 'svc_nodeHealth', ['ignored'], true)) as { result: { dataDirDisk: Record<string, number> } };
      const fs = await statfs(dir);
      const disk = answer.result.dataDirDisk;
      expect(answer.result).to.deep.include(gauges);
      expect(Object.keys(disk)).to.deep.equal(['totalBytes', 'freeBytes', 'usedBytes']);
      expect(disk.totalBytes)
        .to.equal(fs.blocks * fs.bsize)
        .and.be.above(0);
      // Free and used space move with other writers: as this test measures them, give or take 64 MiB.
      const slack = 64 * 1024 * 1024;
      expect(disk.freeBytes).to.be.closeTo(fs.bavail * fs.bsize, slack);
      expect(disk.usedBytes).to.be.closeTo((fs.blocks - fs.bfree) * fs.bsize, slack);
      // The node is asked with [] whatever the caller sent.
      expect(asked()).to.deep.equal([{ method: 'svc_nodeHealth', params: [] }]);
    });

    it('answers dataDirDisk null for a data_dir it cannot measure', async () => {
      const p = await plugin({ data_dir: '/nonexistent/svc-ingress-data' });
      expect(await handle(p, 'svc_nodeHealth', [], true)).to.deep.equal({ result: { ...gauges, dataDirDisk: null } });
    });

    it("passes the node's error answer on unchanged", async () => {
      answers.svc_nodeHealth = failure(-32000, 'not ready');
      const p = await plugin({ data_dir: tmpdir() });
      expect(await handle(p, 'svc_nodeHealth', [], true)).to.deep.equal({ error: { code: -32000, message: 'not ready' } });
    });
  });

  describe('bootstrap methods', () => {
    for (const method of ['svc_getCheckpointChain', 'svc_getJournalTail']) {
      it(`${method}: on an anchor, passes params and the answer through unchanged`, async () => {
        answers[method] = result({ entries: [1, 2] });
        const p = await plugin({ bootstrap_anchor: true });
        expect(await handle(p, method, [5, { from: '0x1' }])).to.deep.equal({ result: { entries: [1, 2] } });
        answers[method] = failure(-32001, 'journal pruned');
        expect(await handle(p, method, ['x'])).to.deep.equal({ error: { code: -32001, message: 'journal pruned' } });
        // Params that are not a list are sent as [].
        await handle(p, method, { n: 5 });
        await handle(p, method);
        expect(asked()).to.deep.equal([
          { method, params: [5, { from: '0x1' }] },
          { method, params: ['x'] },
          { method, params: [] },
          { method, params: [] },
        ]);
      });

      it(`${method}: elsewhere, answers as an unknown method and asks the node nothing`, async () => {
        answers[method] = result({ entries: [] });
        const p = await plugin({ bootstrap_anchor: false });
        const answer = (await handle(p, method, [5])) as { error: unknown };
        expect(answer).to.deep.equal(NOT_FOUND);
        expect(answer.error).to.equal(errors.methodNotFound());
        expect(asked()).to.deep.equal([]);
      });
    }
  });

  describe('a node that is down, slow or broken', () => {
    const everyMethod = [
      ['svc_getRecentCommits', [null, 3], undefined],
      ['svc_getRecentCommits', [4, 3], undefined],
      ['svc_dropStats', [], undefined],
      ['svc_nodeHealth', [], true],
      ['svc_getCheckpointChain', [], undefined],
      ['svc_getJournalTail', [], undefined],
    ] as const;

    /** A plugin on a node at `url`, for one test. */
    const pluginAt = async (url: string, headersTimeoutMs = 1_000) => {
      const upstream = new Upstream({ url, connections: 1, headersTimeoutMs, bodyTimeoutMs: headersTimeoutMs });
      const created = await localMethods.create(
        localMethods.parseOptions(OptionsReader.of('local-methods', { bootstrap_anchor: true, data_dir: tmpdir() })),
        pluginEnv(upstream, log, metrics),
      );
      return { created, close: () => upstream.close() };
    };

    it('answers every node-local method -32603 "node unavailable" when nothing listens, never data', async () => {
      // A port that was just free: connections are refused.
      const closed = await startStubEl({});
      await closed.close();
      const { created, close } = await pluginAt(closed.url);
      try {
        for (const [method, params, operator] of everyMethod) {
          const err = await failureOf(created.handle!(ctxOf(method, params, operator)));
          expect(err.rpc, method).to.deep.equal(NODE_UNAVAILABLE);
          expect(err.message).to.equal(NODE_UNAVAILABLE.message);
          // The upstream's own failure is kept as the cause, for the log.
          expect((err.cause as RpcFailure).rpc).to.deep.equal(errors.upstreamUnavailable());
        }
      } finally {
        await close();
      }
    });

    it('answers "node unavailable" for a node that answers something that is not JSON-RPC', async () => {
      for (const [method] of everyMethod) answers[method] = () => '{"jsonrpc":"2.0","id":1}';
      const p = await plugin({ bootstrap_anchor: true });
      for (const [method, params, operator] of everyMethod) {
        const err = await failureOf(handle(p, method, params, operator));
        expect(err.rpc, method).to.deep.equal(NODE_UNAVAILABLE);
        expect((err.cause as RpcFailure).rpc).to.deep.equal(errors.upstreamInvalid());
      }
    });

    describe('a node that never answers', () => {
      let silent: StubEl;
      before(async () => {
        silent = await startStubEl({}, { intercept: () => HANG });
      });
      after(() => silent.close());

      it('answers "node unavailable" within the node timeout', async () => {
        const { created, close } = await pluginAt(silent.url, 300);
        try {
          const started = Date.now();
          const err = await within(3_000, 'the node timeout', failureOf(created.handle!(ctxOf('svc_dropStats', []))));
          expect(err.rpc).to.deep.equal(NODE_UNAVAILABLE);
          expect(Date.now() - started).to.be.within(250, 2_000);
          expect(silent.received).to.have.length(1);
        } finally {
          await close();
        }
      });
    });
  });
});
