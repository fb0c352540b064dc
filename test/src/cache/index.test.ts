/**
 * The read cache in the running ingress (issue 40), anvil behind a counting stub: anvil calls a
 * block finalized once 64 more are mined.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { once } from 'node:events';
import { connect } from 'node:net';
import { parseConfig } from '../../../src/config/load.js';
import { startIngress } from '../../../src/ingress.js';
import { createLogger } from '../../../src/log.js';
import { Metrics } from '../../../src/metrics.js';
import { post, postFresh } from '../../../support/http.js';
import { CUT, heldAnswer, startStubEl, type StubEl } from '../../../support/stub-el.js';
import { useAnvil } from '../../helpers/el.js';
import { startRedis } from '../../helpers/redis.js';
import { startTestIngress, testConfig, type TestIngress } from '../../helpers/ingress.js';

const PLUGINS = `
  - batch-refuse
  - size-limit
  - allowlist
  - rate-limit:
      reads: {per_source: {rate_per_second: 10000, burst: 10000}}`;
const ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

const JSON_TYPE = { 'content-type': 'application/json' };
const body = (id: unknown, method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('read cache: answers the chain already gave, in the running ingress (cache/)', () => {
  const anvil = useAnvil();
  let el: StubEl;
  let ingress: TestIngress;
  const ask = async (url: string, id: unknown, method: string, params: unknown[]) =>
    (await post(url, body(id, method, params), { 'content-type': 'application/json' })).text;
  /** Requests the EL got for `method`, the cache's own asks for the finalized head left out. */
  const asked = (method: string) => el.received.filter((r) => r.method === method && (r.params as unknown[])[0] !== 'finalized').length;
  const finalizedAsks = () =>
    el.received.filter((r) => r.method === 'eth_getBlockByNumber' && (r.params as unknown[])[0] === 'finalized').length;
  /** Until the cache's follower has asked for the finalized head twice more (it knows the newest). */
  const followed = async () => {
    const from = finalizedAsks();
    for (let i = 0; finalizedAsks() < from + 2; i++) {
      if (i > 250) throw new Error('the finalized head was not asked for within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const metric = async (name: string) => {
    const text = await (await fetch(`${ingress.metricsUrl}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
  };

  before(async () => {
    await ask(anvil.current.url, 1, 'anvil_mine', ['0x50']);
    el = await startStubEl({}, { fallthrough: anvil.current.url });
    ingress = await startTestIngress(
      testConfig(el.url, PLUGINS, 'metrics_listen: 127.0.0.1:0\ncache: {follow_ms: 50}').replace('log_level: debug', 'log_level: error'),
    );
    await followed();
  });
  after(async () => {
    await ingress.shutdown();
    await el.close();
  });

  it("answers final reads byte for byte as the EL does, each with the asker's id, asking the EL once", async () => {
    const block5 = JSON.parse(await ask(anvil.current.url, 1, 'eth_getBlockByNumber', ['0x5', false])) as { result: { hash: string } };
    const reads: Array<[string, unknown[]]> = [
      ['eth_chainId', []],
      ['eth_getBlockByNumber', ['0x5', false]],
      ['eth_getBlockByHash', [block5.result.hash, true]],
      ['eth_getBalance', [ADDRESS, '0x5']],
      ['eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x10' }]],
    ];
    for (const [method, params] of reads) {
      const before = asked(method);
      for (const id of [1, 'two', null, 4]) {
        const direct = await ask(anvil.current.url, id, method, params);
        expect(await ask(ingress.url, id, method, params), `${method} id ${JSON.stringify(id)}`).to.equal(direct);
      }
      expect(asked(method) - before, `${method}: EL asks`).to.equal(1);
    }
    expect(await metric('svc_ingress_cache_hits_total')).to.be.at.least(15);
  });

  it('asks the EL every time for what is not final, and keeps it once the finalized head passes it', async () => {
    const head = BigInt(JSON.parse(await ask(anvil.current.url, 1, 'eth_blockNumber', [])).result as string);
    const recent = `0x${(head - 2n).toString(16)}`;
    const before = asked('eth_getBlockByNumber');
    await ask(ingress.url, 1, 'eth_getBlockByNumber', [recent, false]);
    await ask(ingress.url, 2, 'eth_getBlockByNumber', [recent, false]);
    await ask(ingress.url, 3, 'eth_getBlockByNumber', ['latest', false]);
    await ask(ingress.url, 4, 'eth_getBlockByNumber', ['latest', false]);
    expect(asked('eth_getBlockByNumber') - before, 'none kept').to.equal(4);
    await ask(anvil.current.url, 1, 'anvil_mine', ['0x40']);
    await followed();
    await ask(ingress.url, 5, 'eth_getBlockByNumber', [recent, false]);
    const kept = asked('eth_getBlockByNumber');
    expect(await ask(ingress.url, 6, 'eth_getBlockByNumber', [recent, false])).to.equal(
      await ask(anvil.current.url, 6, 'eth_getBlockByNumber', [recent, false]),
    );
    expect(asked('eth_getBlockByNumber'), 'kept once final').to.equal(kept);
  });

  it('empties itself when the finalized head goes back', async () => {
    await ask(ingress.url, 1, 'eth_getBlockByNumber', ['0x6', false]);
    expect(await metric('svc_ingress_cache_entries')).to.be.greaterThan(0);
    await ask(anvil.current.url, 1, 'anvil_rollback', [20]);
    await followed();
    expect(await metric('svc_ingress_cache_entries')).to.equal(0);
  });

  it('charges a kept answer as any read: past the burst, refused', async () => {
    const priced = await startTestIngress(
      testConfig(el.url, PLUGINS.replace('rate_per_second: 10000, burst: 10000', 'rate_per_second: 1, burst: 5')).replace(
        'log_level: debug',
        'log_level: error',
      ),
    );
    try {
      const codes: Array<number | 'ok'> = [];
      for (let id = 1; id <= 8; id++) {
        const answer = JSON.parse(await ask(priced.url, id, 'eth_chainId', [])) as { result?: string; error?: { code: number } };
        codes.push(answer.result !== undefined ? 'ok' : answer.error!.code);
      }
      expect(codes.slice(0, 5)).to.deep.equal(['ok', 'ok', 'ok', 'ok', 'ok']);
      expect(codes.slice(5)).to.deep.equal([-32005, -32005, -32005]);
    } finally {
      await priced.shutdown();
    }
  });
});

describe('read cache: identical reads in flight at once share one EL answer (cache/in-flight.ts)', () => {
  /** An ingress in this process (its in-flight count read from its Metrics) in front of a stub EL. */
  const withIngress = async (
    answers: Parameters<typeof startStubEl>[0],
    use: (url: string, el: StubEl, inFlight: () => number) => Promise<void>,
    extra = 'cache: {}',
  ) => {
    const el = await startStubEl(answers);
    const metrics = new Metrics();
    const ingress = await startIngress(parseConfig(testConfig(el.url, PLUGINS, extra)), createLogger('error'), metrics);
    try {
      await use(ingress.url, el, () => metrics.inFlight());
    } finally {
      await ingress.shutdown();
      await el.close();
    }
  };
  const ask = async (url: string, id: unknown, method: string, params: unknown[] = []) =>
    (await post(url, body(id, method, params), { 'content-type': 'application/json' })).text;
  const blockNumbers = (el: StubEl) => el.received.filter((r) => r.method === 'eth_blockNumber').length;

  it('answers ten identical reads with one EL request, each with its own id; a read after it asks again', async () => {
    const held = heldAnswer('0x2a');
    await withIngress({ eth_blockNumber: held.answer }, async (url, el, inFlight) => {
      // The operator listener's readiness probe asks for the head too: counted from here.
      const before = blockNumbers(el);
      const first = ask(url, 0, 'eth_blockNumber');
      await held.arrived;
      const rest = Array.from({ length: 9 }, (_, i) => ask(url, i + 1, 'eth_blockNumber'));
      // The nine have reached the ingress and joined the first before it is released.
      for (let i = 0; i < 100 && inFlight() < 10; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      held.release();
      const answers = await Promise.all([first, ...rest]);
      expect(answers).to.deep.equal(Array.from({ length: 10 }, (_, id) => `{"jsonrpc":"2.0","id":${id},"result":"0x2a"}`));
      expect(blockNumbers(el) - before).to.equal(1);
      await ask(url, 11, 'eth_blockNumber');
      expect(blockNumbers(el) - before).to.equal(2);
    });
  });

  it('sends the followers to the EL themselves when the first read gets no answer', async () => {
    let calls = 0;
    await withIngress(
      { eth_blockNumber: (id) => (++calls === 1 ? CUT : JSON.stringify({ jsonrpc: '2.0', id, result: '0x2b' })) },
      async (url) => {
        const answers = await Promise.all(Array.from({ length: 5 }, (_, id) => ask(url, id, 'eth_blockNumber')));
        expect(answers.filter((a) => a.includes('"result":"0x2b"'))).to.have.length.of.at.least(4);
      },
    );
  });

  it("never holds a follower to the first client's pace: a 4 MB answer it does not read", async () => {
    const large = `0x${'ab'.repeat(2 * 1024 * 1024)}`;
    await withIngress({ eth_getCode: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: large }) }, async (url, el) => {
      const request = body(1, 'eth_getCode', [ADDRESS, 'latest']);
      const { port } = new URL(url);
      // The first client sends the read and never reads a byte of its answer.
      const stalled = connect(Number(port), '127.0.0.1');
      stalled.on('error', () => {});
      await once(stalled, 'connect');
      stalled.pause();
      stalled.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${request.length}\r\n\r\n${request}`);
      for (let i = 0; i < 100 && el.received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      const started = performance.now();
      const follower = JSON.parse(await ask(url, 2, 'eth_getCode', [ADDRESS, 'latest'])) as { id: number; result: string };
      expect([follower.id, follower.result.length]).to.deep.equal([2, large.length]);
      // Answered as fast as the EL answers, not after read_stall_ms (10 s) cut the first client.
      expect(performance.now() - started).to.be.below(2_000);
      stalled.destroy();
    });
  });

  it('never shares with cache.max_bytes: 0', async () => {
    const held = heldAnswer('0x2c');
    await withIngress(
      { eth_blockNumber: held.answer },
      async (url, el) => {
        const before = blockNumbers(el);
        const first = ask(url, 0, 'eth_blockNumber');
        await held.arrived;
        const second = ask(url, 1, 'eth_blockNumber');
        for (let i = 0; i < 100 && blockNumbers(el) - before < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        held.release();
        await Promise.all([first, second]);
        expect(blockNumbers(el) - before).to.equal(2);
      },
      'cache: {max_bytes: 0}',
    );
  });
});

describe("read cache: shared through the fleet's Redis with cache.shared (cache/index.ts)", () => {
  const anvil = useAnvil();

  it('answers a final read another instance kept, byte for byte with its own id, without asking the EL; without Redis, asks it', async () => {
    await post(anvil.current.url, body(1, 'anvil_mine', ['0x50']), { 'content-type': 'application/json' });
    const redis = await startRedis();
    const el = await startStubEl({}, { fallthrough: anvil.current.url });
    const config = testConfig(el.url, PLUGINS, `store: redis\nredis_url: ${redis.url}\ncache: {shared: true, follow_ms: 50}`).replace(
      'log_level: debug',
      'log_level: error',
    );
    const [a, b] = [await startTestIngress(config), await startTestIngress(config)];
    const ask = async (url: string, id: unknown) =>
      (await post(url, body(id, 'eth_getBlockByNumber', ['0x7', false]), { 'content-type': 'application/json' })).text;
    const asked = () => el.received.filter((r) => r.method === 'eth_getBlockByNumber' && (r.params as unknown[])[0] === '0x7').length;
    try {
      // Until a answers from its own cache (its follower knew the finalized head), then a second
      // source reads it there: what two sources read goes to Redis.
      for (let i = 0; ; i++) {
        if (i > 250) throw new Error('a did not keep the answer within 5 s');
        const n = asked();
        await ask(a.url, 1);
        if (asked() === n) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const inRedis = new Redis(redis.url);
      try {
        expect(await inRedis.keys('svc:cache:*'), 'read by one source: not in Redis').to.deep.equal([]);
        await postFresh(a.url, body(2, 'eth_getBlockByNumber', ['0x7', false]), '127.0.0.2');
        for (let i = 0; (await inRedis.keys('svc:cache:*')).length === 0; i++) {
          if (i > 250) throw new Error('the answer a second source read did not reach Redis within 5 s');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        // A source reading final answers nobody else reads (twice each: kept, then answered here)
        // writes nothing more there.
        for (let n = 1; n <= 16; n++)
          for (const id of [1, 2]) await post(a.url, body(id, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true]), JSON_TYPE);
        expect(await inRedis.keys('svc:cache:*'), 'one source, 16 blocks').to.have.length(1);
      } finally {
        inRedis.disconnect();
      }
      const before = asked();
      const direct = (
        await post(anvil.current.url, body('b', 'eth_getBlockByNumber', ['0x7', false]), { 'content-type': 'application/json' })
      ).text;
      expect(await ask(b.url, 'b')).to.equal(direct);
      expect(asked(), 'b asked the EL').to.equal(before);
      await redis.stop();
      expect(await ask(b.url, 'b'), 'kept by b itself now').to.equal(direct);
    } finally {
      await Promise.all([a.shutdown(), b.shutdown()]);
      await el.close();
      await redis.stop();
    }
  });

  it('behind a trusted proxy, shares an answer once a second client it forwards for reads it', async () => {
    await post(anvil.current.url, body(1, 'anvil_mine', ['0x50']), JSON_TYPE);
    const redis = await startRedis();
    const proxied = PLUGINS.replace('      reads:', '      trusted_proxies: [127.0.0.1/32]\n      reads:');
    const config = testConfig(
      anvil.current.url,
      proxied,
      `store: redis\nredis_url: ${redis.url}\ncache: {shared: true, follow_ms: 50}`,
    ).replace('log_level: debug', 'log_level: error');
    const a = await startTestIngress(config);
    const inRedis = new Redis(redis.url);
    const readAs = (client: string) =>
      post(a.url, body(1, 'eth_getBlockByNumber', ['0x9', false]), { ...JSON_TYPE, 'x-forwarded-for': client });
    try {
      // Kept once the follower knows the finalized head: read by one client until then, and after.
      for (let i = 0; i < 10; i++) await readAs('198.51.100.1');
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (let i = 0; i < 3; i++) await readAs('198.51.100.1');
      expect(await inRedis.keys('svc:cache:*'), 'one client behind the proxy').to.deep.equal([]);
      await readAs('198.51.100.2');
      for (let i = 0; (await inRedis.keys('svc:cache:*')).length === 0; i++) {
        if (i > 250) throw new Error('the answer a second client read did not reach Redis within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      inRedis.disconnect();
      await a.shutdown();
      await redis.stop();
    }
  });

  it('refuses cache.shared without store: redis, at load', () => {
    expect(() => parseConfig(testConfig('http://127.0.0.1:1', PLUGINS, 'cache: {shared: true}'))).to.throw(
      /cache\.shared.*needs store: redis/,
    );
  });
});
