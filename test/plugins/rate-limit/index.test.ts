import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { connect } from 'node:net';
import { once } from 'node:events';
import { rateLimit } from '../../../plugins/rate-limit/index.js';
import { CarryOver } from '../../../src/carry-over.js';
import { OptionsReader } from '../../../src/config/reader.js';
import { createLogger } from '../../../src/log.js';
import { Facts, RequestTab, SOURCE, type Plugin, type RequestContext } from '../../../src/plugin.js';
import { Upstream } from '../../../src/upstream.js';
import type { RpcError } from '../../../src/errors.js';
import { useAnvil } from '../../helpers/el.js';
import { heldAnswer, startStubEl } from '../../../support/stub-el.js';
import { within } from '../../../support/within.js';
import { pluginEnv } from '../../helpers/plugin-env.js';
import { startTestIngress, testConfig, type TestIngress } from '../../helpers/ingress.js';

/** A client on its own loopback address, for the suite: a distinct TCP peer, as distinct as a real one. */
function useClientAt(localAddress: string) {
  let agent: Agent;
  before(() => {
    agent = new Agent({ localAddress });
  });
  after(() => agent.close());
  const send = async (url: string, method: string, headers: Record<string, string> = {}, params: unknown[] = []) => {
    const reply = await request(url, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return { status: reply.statusCode, retryAfter: reply.headers['retry-after'], body: JSON.parse(await reply.body.text()) };
  };
  return { send };
}

const limited = (scope: 'source' | 'host') => ({
  code: -32005,
  message:
    scope === 'source'
      ? 'rate limited: too many requests from this source; retry later'
      : 'rate limited: the endpoint is at capacity; retry later',
});

/** Resolves once the ingress holds exactly `count` requests (its in-flight gauge on /metrics), within 2 s. */
function holdingRequests(ingress: TestIngress, count: number): Promise<void> {
  return within(
    2_000,
    `${count} requests in the ingress`,
    (async () => {
      for (;;) {
        const text = await (await request(`${ingress.metricsUrl}/metrics`)).body.text();
        if (Number(/^svc_ingress_requests_in_flight (\d+)$/m.exec(text)?.[1]) === count) return;
        await sleep(5);
      }
    })(),
  );
}

describe('rate-limit', () => {
  const anvil = useAnvil();
  const a = useClientAt('127.0.0.2');
  const b = useClientAt('127.0.0.3');
  const c = useClientAt('127.0.0.4');

  const limitedIngress = (options: string, extraPlugins = '') =>
    startTestIngress(testConfig(anvil.current.url, `\n  - allowlist\n  - rate-limit:\n${options}${extraPlugins}`));
  /** An ingress for one test, shut down however the test ends. */
  const withLimitedIngress = async (options: string, use: (ingress: TestIngress) => Promise<void>, extraPlugins = '') => {
    const ingress = await limitedIngress(options, extraPlugins);
    try {
      await use(ingress);
    } finally {
      await ingress.shutdown();
    }
  };

  describe('per source, then host-wide', () => {
    let ingress: TestIngress;
    before(async () => {
      ingress = await limitedIngress(`      reads:
        per_source: {rate_per_second: 3, burst: 3}
        host: {rate_per_second: 5, burst: 5}
        method_costs: {eth_getLogs: 3}`);
    });
    after(() => ingress.shutdown());

    it('refuses a source over its bucket with -32005 and HTTP 429, while another source is served', async () => {
      for (let i = 0; i < 3; i++) expect((await a.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      const over = await a.send(ingress.url, 'eth_chainId');
      expect(over.status).to.equal(429);
      expect(over.body.error).to.include(limited('source'));
      expect(over.body.error.data.retry_after_ms).to.be.a('number').and.above(0);
      expect(Number(over.retryAfter)).to.be.at.least(1);
      // A second source at the same moment still has its own bucket...
      expect((await b.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      expect((await b.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      // ...until the host-wide bucket (5) is spent by the sum of both: 3 + 2.
      const host = await c.send(ingress.url, 'eth_chainId');
      expect(host.status).to.equal(429);
      expect(host.body.error).to.include(limited('host'));
    });
  });

  it('serves a refused source again once the wait it was told has passed', async () => {
    await withLimitedIngress(
      `      reads:
        per_source: {rate_per_second: 2, burst: 10}
        method_costs: {eth_getLogs: 10}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_getLogs')).status).to.equal(200);
        const over = await a.send(ingress.url, 'eth_chainId');
        expect(over.status).to.equal(429);
        // One token at 2 per second; Retry-After rounds up to whole seconds.
        expect(over.body.error.data.retry_after_ms).to.be.within(1, 501);
        expect(over.retryAfter).to.equal('1');
        await sleep(over.body.error.data.retry_after_ms);
        expect((await a.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      },
    );
  });

  it('charges heavy reads their method cost', async () => {
    await withLimitedIngress(
      `      reads:
        per_source: {rate_per_second: 3, burst: 3}
        method_costs: {eth_getLogs: 3}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_getLogs')).status).to.equal(200);
        expect((await a.send(ingress.url, 'eth_chainId')).body.error).to.include(limited('source'));
      },
    );
  });

  it('charges eth_getProof one token per four storage keys beside its method cost', async () => {
    await withLimitedIngress(
      `      reads:
        per_source: {rate_per_second: 1, burst: 16}
        method_costs: {eth_getProof: 5}`,
      async (ingress) => {
        // 5 + 10 of the 16 tokens; a proof of no keys then costs 5, one more than is left.
        const keys = Array.from({ length: 40 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);
        const account = '0x000000000000000000000000000000000000dEaD';
        expect((await a.send(ingress.url, 'eth_getProof', {}, [account, keys, 'latest'])).status).to.equal(200);
        expect((await a.send(ingress.url, 'eth_getProof', {}, [account, [], 'latest'])).body.error).to.include(limited('source'));
        expect((await b.send(ingress.url, 'eth_getProof', {}, [account, [], 'latest'])).status).to.equal(200);
      },
    );
  });

  it('does not let a source over its own quota drain the host bucket', async () => {
    await withLimitedIngress(
      `      reads:
        per_source: {rate_per_second: 1, burst: 1}
        host: {rate_per_second: 2, burst: 2}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_chainId')).status).to.equal(200);
        for (let i = 0; i < 5; i++) expect((await a.send(ingress.url, 'eth_chainId')).body.error).to.include(limited('source'));
        expect((await b.send(ingress.url, 'eth_chainId')).status).to.equal(200);
      },
    );
  });

  it('limits submissions in their own buckets', async () => {
    await withLimitedIngress(
      `      submissions:
        per_source: {rate_per_second: 1, burst: 1}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_sendRawTransaction')).body.error.code).to.equal(-32602);
        expect((await a.send(ingress.url, 'eth_sendRawTransaction')).body.error).to.include(limited('source'));
        expect((await a.send(ingress.url, 'eth_chainId')).status).to.equal(200);
      },
      '\n  - gate',
    );
  });

  describe('X-Forwarded-For', () => {
    const options = `      reads:
        per_source: {rate_per_second: 1, burst: 1}`;

    it('changes nothing when spoofed by an untrusted peer', async () => {
      await withLimitedIngress(options, async (ingress) => {
        expect((await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.1' })).status).to.equal(200);
        const spoofed = await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.2' });
        expect(spoofed.body.error).to.include(limited('source'));
      });
    });

    it('selects the client behind a trusted proxy', async () => {
      await withLimitedIngress(`      trusted_proxies: [127.0.0.2]\n${options}`, async (ingress) => {
        expect((await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.1' })).status).to.equal(200);
        expect((await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.2' })).status).to.equal(200);
        const again = await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '203.0.113.5, 198.51.100.1' });
        expect(again.body.error).to.include(limited('source'));
      });
    });
  });

  describe('gas-heavy reads', () => {
    const DEAD = '0x000000000000000000000000000000000000dEaD';

    it("prices eth_call by the gas it asks for, a call naming no gas at the EL's cap (5 tokens at 50,000,000)", async () => {
      // EL time priced so that it never matters here: the test below prices it.
      await withLimitedIngress(
        '      reads:\n        per_source: {rate_per_second: 1, burst: 10}\n        el_ms_per_token: 100000',
        async (ingress) => {
          for (let i = 0; i < 2; i++) expect((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest'])).status).to.equal(200);
          expect((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest'])).body.error).to.include(limited('source'));
          for (let i = 0; i < 10; i++)
            expect((await b.send(ingress.url, 'eth_call', {}, [{ to: DEAD, gas: '0x5208' }, 'latest'])).status).to.equal(200);
          expect((await b.send(ingress.url, 'eth_call', {}, [{ to: DEAD, gas: '0x5208' }, 'latest'])).body.error).to.include(
            limited('source'),
          );
        },
      );
    });

    it("prices a call naming no gas at size-limit's rpc_gas_cap when it runs first, and an eth_simulateV1 by the sum of its calls (one cap for those naming none)", async () => {
      const ingress = await startTestIngress(
        testConfig(
          anvil.current.url,
          `
  - size-limit:
      rpc_gas_cap: 20000000
      max_simulate_gas: 60000000
  - allowlist
  - rate-limit:
      reads:
        per_source: {rate_per_second: 1, burst: 10}
        el_ms_per_token: 100000`,
        ),
      );
      try {
        for (let i = 0; i < 5; i++) expect((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest'])).status).to.equal(200);
        expect((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest'])).body.error).to.include(limited('source'));
        const simulation = [{ blockStateCalls: [{ calls: [{ to: DEAD }, { to: DEAD }, { to: DEAD, gas: '0x989680' }] }] }, 'latest'];
        // 20,000,000 shared by the two naming no gas (as geth's pool) + 10,000,000: 3 tokens of b's 10.
        for (let i = 0; i < 3; i++) expect((await b.send(ingress.url, 'eth_simulateV1', {}, simulation)).status).to.equal(200);
        expect((await b.send(ingress.url, 'eth_simulateV1', {}, simulation)).body.error).to.include(limited('source'));
      } finally {
        await ingress.shutdown();
      }
    });

    it('charges the EL time an answer took beyond what the read paid, as debt; the wait for a connection is not EL time', async () => {
      let arrived = () => {};
      const slowArrived = new Promise<void>((resolve) => (arrived = resolve));
      const el = await startStubEl({
        eth_call: async (id) => {
          arrived();
          await sleep(300);
          return JSON.stringify({ jsonrpc: '2.0', id, result: '0x' });
        },
        eth_estimateGas: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x5208' }),
        eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }),
        eth_blockNumber: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' }),
      });
      // 50 ms a token: 300 ms of EL time is 6 tokens or more, 1 paid up front.
      const ingress = await startTestIngress(
        testConfig(
          el.url,
          '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 1, burst: 8}\n        el_ms_per_token: 50',
          // A read answered more than 1 ms after the slow call reached the EL shows it was not held.
        ).replace('  headers_timeout_ms: 2000', '  headers_timeout_ms: 2000\n  heavy_connections: 1\n  quick_call_ms: 1'),
      );
      try {
        const call = [{ to: DEAD, gas: '0x5208' }, 'latest'];
        const slow = a.send(ingress.url, 'eth_call', {}, call);
        await within(2_000, 'the EL receives the slow call', slowArrived);
        // The EL answers another read at once meanwhile: it was not holding every read (as
        // anvil does while it seals a block, which no source is charged for).
        expect((await b.send(ingress.url, 'eth_chainId')).status).to.equal(200);
        // One such answer must come within quick_call_ms (1 ms): on a loaded machine one may not,
        // so a third source asks a few more.
        for (let i = 0; i < 5; i++) expect((await c.send(ingress.url, 'eth_blockNumber')).status).to.equal(200);
        // b's estimate waits ~300 ms in the ingress for the one heavy connection, then is answered at once.
        const quick = b.send(ingress.url, 'eth_estimateGas', {}, call);
        expect((await slow).body.result).to.equal('0x');
        expect((await quick).body.result).to.equal('0x5208');
        const answers: number[] = [];
        for (let i = 0; i < 3; i++) answers.push((await a.send(ingress.url, 'eth_chainId')).status);
        // At most 8 - 1 - 5 = 2 tokens left: the third read at the latest is refused.
        expect(answers).to.include(429);
        // A quick answer owes nothing, however long it waited: b's 8 tokens pay 1 estimate and 7 reads.
        for (let i = 0; i < 6; i++) expect((await b.send(ingress.url, 'eth_chainId')).status).to.equal(200);
      } finally {
        await ingress.shutdown();
        await el.close();
      }
    });

    it('charges nothing for a long answer while the EL answered no other read quickly: it may have held the call (anvil sealing a block)', async () => {
      const el = await startStubEl({
        eth_call: async (id) => {
          await sleep(300);
          return JSON.stringify({ jsonrpc: '2.0', id, result: '0x' });
        },
        eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }),
      });
      const ingress = await startTestIngress(
        testConfig(
          el.url,
          '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 1, burst: 8}\n        el_ms_per_token: 50',
        ),
      );
      try {
        expect((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD, gas: '0x5208' }, 'latest'])).body.result).to.equal('0x');
        // 300 ms would be 6 tokens of debt; uncharged, the 7 tokens left pay 7 reads.
        for (let i = 0; i < 7; i++) expect((await a.send(ingress.url, 'eth_chainId')).status).to.equal(200);
      } finally {
        await ingress.shutdown();
        await el.close();
      }
    });

    it('holds max_heavy_in_flight_per_source of them open per source: past it -32005, HTTP 429 and Retry-After', async () => {
      const held = heldAnswer('0x');
      const el = await startStubEl({
        eth_call: held.answer,
        eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }),
      });
      const ingress = await startTestIngress(
        testConfig(
          el.url,
          '\n  - allowlist\n  - rate-limit:\n      max_heavy_in_flight_per_source: 1\n      reads: {per_source: {rate_per_second: 100}}',
        ),
      );
      try {
        const pending = a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest']);
        await within(2_000, 'the EL receives the first eth_call', held.arrived);
        for (const method of ['eth_call', 'eth_estimateGas', 'eth_createAccessList', 'eth_simulateV1']) {
          expect(await a.send(ingress.url, method, {}, [{ to: DEAD }, 'latest']), method).to.deep.equal({
            status: 429,
            retryAfter: '1',
            body: {
              jsonrpc: '2.0',
              id: 1,
              error: {
                code: -32005,
                message:
                  'rate limited: too many eth_call, eth_estimateGas, eth_createAccessList or eth_simulateV1 requests in flight from this source; retry later',
                data: { retry_after_ms: 1000 },
              },
            },
          });
        }
        // Other reads of the same source, and another source's calls, pass.
        expect((await a.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
        const other = b.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest']);
        held.release();
        expect((await pending).body.result).to.equal('0x');
        expect((await other).body.result).to.equal('0x');
        expect((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest'])).body.result).to.equal('0x');
      } finally {
        held.release();
        await ingress.shutdown();
        await el.close();
      }
    });

    it('gives the heavy lane by EL time used: a source with a backlog does not make one that used none wait for any of it', async () => {
      const held = heldAnswer('0x');
      const order: string[] = [];
      const el = await startStubEl({
        eth_call: (id, params, call) => {
          order.push((params as Array<{ data: string }>)[0]!.data);
          return held.answer(id, params, call);
        },
      });
      const ingress = await startTestIngress(
        testConfig(
          el.url,
          '\n  - allowlist\n  - rate-limit:\n      max_heavy_in_flight_per_source: 4\n      reads: {per_source: {rate_per_second: 100}}',
          'metrics_listen: 127.0.0.1:0',
        ).replace('  headers_timeout_ms: 2000', '  headers_timeout_ms: 2000\n  heavy_connections: 1\n  quick_connections: 0'),
      );
      /** Until the ingress holds `count` requests (its in-flight gauge). */
      const holding = (count: number) => holdingRequests(ingress, count);
      const callOf = (data: string) => [{ to: DEAD, gas: '0x5208', data }, 'latest'];
      try {
        const a1 = a.send(ingress.url, 'eth_call', {}, callOf('0xa1'));
        await within(2_000, 'the EL has a1', held.arrived);
        const a2 = a.send(ingress.url, 'eth_call', {}, callOf('0xa2'));
        await holding(2);
        const a3 = a.send(ingress.url, 'eth_call', {}, callOf('0xa3'));
        await holding(3);
        // b's call arrives last, behind a's two waiting ones.
        const b1 = b.send(ingress.url, 'eth_call', {}, callOf('0xb1'));
        await holding(4);
        const scraped = await (await request(`${ingress.metricsUrl}/metrics`)).body.text();
        expect(scraped).to.match(/^svc_ingress_el_calls_waiting 3$/m);
        expect(scraped).to.match(/^svc_ingress_el_calls_running\{lane="heavy"\} 1$/m);
        expect(scraped).to.match(/^svc_ingress_el_calls_running\{lane="quick"\} 0$/m);
        // a and b, each with a call counted.
        expect(scraped).to.match(/^svc_ingress_el_sources 2$/m);
        held.release();
        const queued = [a2, a3];
        for (const reply of await Promise.all([a1, ...queued, b1])) expect(reply.body.result).to.equal('0x');
        // a has used the EL (a1's time), b nothing: b goes first, then a's backlog.
        expect(order).to.deep.equal(['0xa1', '0xb1', '0xa2', '0xa3']);
      } finally {
        held.release();
        await ingress.shutdown();
        await el.close();
      }
    });

    it("ends a call's turn when the EL has answered it: a client reading its answer slowly does not hold the lane", async () => {
      // 8 MB of answer: far more than the sockets between hold, so its client, reading nothing, keeps it streaming.
      const big = JSON.stringify({ jsonrpc: '2.0', id: 1, result: `0x${'ab'.repeat(4_000_000)}` });
      const el = await startStubEl({ eth_call: () => big });
      const ingress = await startTestIngress(
        testConfig(el.url, '\n  - allowlist\n  - rate-limit:\n      reads: {per_source: {rate_per_second: 100}}').replace(
          '  headers_timeout_ms: 2000',
          '  headers_timeout_ms: 2000\n  heavy_connections: 1\n  quick_connections: 0',
        ),
      );
      const slow = connect({ port: ingress.port, host: '127.0.0.1', localAddress: '127.0.0.2' });
      try {
        slow.on('error', () => {});
        await once(slow, 'connect');
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: DEAD }, 'latest'] });
        slow.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
        await once(slow, 'data');
        slow.pause();
        // Another source's call, on the one heavy turn, is answered while the first answer streams.
        const started = performance.now();
        const other = await b.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest']);
        expect(other.status).to.equal(200);
        expect(performance.now() - started).to.be.below(2_000);
      } finally {
        slow.destroy();
        await ingress.shutdown();
        await el.close();
      }
    });

    it("holds a call's slot until the EL has answered it, though its client left: the EL computes on", async () => {
      const held = heldAnswer('0x');
      const el = await startStubEl({ eth_call: held.answer });
      const ingress = await startTestIngress(
        testConfig(
          el.url,
          '\n  - allowlist\n  - rate-limit:\n      max_heavy_in_flight_per_source: 1\n      reads: {per_source: {rate_per_second: 100}}',
          'metrics_listen: 127.0.0.1:0',
        ),
      );
      const leaving = new Agent({ localAddress: '127.0.0.2' });
      try {
        const abort = new AbortController();
        const gone = request(ingress.url, {
          dispatcher: leaving,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: DEAD }, 'latest'] }),
          signal: abort.signal,
        }).catch((err: Error) => err);
        await within(2_000, 'the EL receives the eth_call', held.arrived);
        abort.abort();
        expect(await gone).to.be.instanceOf(Error);
        // The ingress sees the client gone.
        await holdingRequests(ingress, 0);
        // The request is over for the ingress, not for the EL: the source's slot is still taken.
        expect((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest'])).status).to.equal(429);
        held.release();
        await within(
          2_000,
          'the slot given back once the EL answered',
          (async () => {
            while ((await a.send(ingress.url, 'eth_call', {}, [{ to: DEAD }, 'latest'])).status !== 200) await sleep(10);
          })(),
        );
      } finally {
        held.release();
        await leaving.close();
        await ingress.shutdown();
        await el.close();
      }
    });
  });
});

describe('rate-limit across a reload (PluginEnv.carried)', () => {
  const upstream = new Upstream({ url: 'http://127.0.0.1:1', connections: 1, headersTimeoutMs: 100, bodyTimeoutMs: 100 });
  after(() => upstream.close());

  /** The plugin as a runtime after `previous` builds it from `options`, with its carry-over. */
  const build = async (options: Record<string, unknown>, previous?: CarryOver) => {
    const carried = new CarryOver(previous?.kept);
    const env = { ...pluginEnv(upstream, createLogger('error')), carried };
    const plugin = await rateLimit.create(rateLimit.parseOptions(OptionsReader.of('rate-limit', options)), env);
    return { plugin, carried };
  };
  const ask = (plugin: Plugin, address: string, method = 'eth_chainId') => {
    const ctx: RequestContext = {
      request: { jsonrpc: '2.0', id: 1, method, params: [] },
      peer: { address, headers: {} },
      facts: new Facts(),
      tab: new RequestTab(),
    };
    return { verdict: plugin.handle!(ctx), close: () => ctx.tab.close() };
  };
  const reads = (burst: number, inFlight = 32) => ({
    max_in_flight_per_source: inFlight,
    reads: { per_source: { rate_per_second: 1, burst }, method_costs: { eth_getBalance: 10 } },
  });

  it("keeps a source's in-flight requests counted by the new chain, and frees them as they close", async () => {
    const first = await build(reads(100, 1));
    const open = ask(first.plugin, '192.0.2.1');
    expect(open.verdict).to.equal(undefined);
    const next = await build(reads(100, 1), first.carried);
    next.carried.commit();
    expect((ask(next.plugin, '192.0.2.1').verdict as { error: { message: string } }).error.message).to.equal(
      'rate limited: too many requests in flight from this source; retry later',
    );
    open.close();
    expect(ask(next.plugin, '192.0.2.1').verdict).to.equal(undefined);
  });

  it('keeps bucket levels, clamped to a smaller burst once the new chain is adopted', async () => {
    const first = await build(reads(100));
    for (let i = 0; i < 7; i++) expect(ask(first.plugin, '192.0.2.2', 'eth_getBalance').verdict).to.equal(undefined);
    const next = await build(reads(50), first.carried);
    next.carried.commit();
    // 30 tokens left (and under a second's drip): three calls of 10, where a new source gets five.
    const passed = (address: string) => {
      let n = 0;
      while (n < 10 && ask(next.plugin, address, 'eth_getBalance').verdict === undefined) n++;
      return n;
    };
    expect(passed('192.0.2.2')).to.equal(3);
    expect(passed('192.0.2.3')).to.equal(5);
  });

  it('names the source of a connection by its peer: IPv6 by prefix, a trusted proxy none (not capped)', async () => {
    const { plugin } = await build({ trusted_proxies: ['10.0.0.1'], ipv6_source_prefix: 56 });
    expect(plugin.connectionSource!('192.0.2.9')).to.equal('192.0.2.9');
    expect(plugin.connectionSource!('::ffff:192.0.2.9')).to.equal('192.0.2.9');
    expect(plugin.connectionSource!('2001:db8:0:ab12::1')).to.equal('2001:db8:0:ab00::/56');
    expect(plugin.connectionSource!('10.0.0.1')).to.equal(null);
  });
});

describe('rate-limit: the facts a submission leaves for the gate', () => {
  const upstream = new Upstream({ url: 'http://127.0.0.1:1', connections: 1, headersTimeoutMs: 100, bodyTimeoutMs: 100 });
  after(() => upstream.close());

  const submit = async (options: Record<string, unknown>, peer: RequestContext['peer']) => {
    const plugin = await rateLimit.create(
      rateLimit.parseOptions(OptionsReader.of('rate-limit', options)),
      pluginEnv(upstream, createLogger('error')),
    );
    const send = (facts = new Facts(), tab = new RequestTab()) =>
      plugin.handle!({ request: { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: ['0x00'] }, peer, facts, tab });
    const facts = new Facts();
    const tab = new RequestTab();
    await send(facts, tab);
    return { facts, tab, again: () => send() };
  };

  it("names the source behind a trusted proxy, and keeps its tab: what is taken or owed comes from the source's submission bucket", async () => {
    const { facts, tab, again } = await submit(
      { trusted_proxies: ['127.0.0.1'], submissions: { per_source: { rate_per_second: 1, burst: 5 } } },
      { address: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.7' } },
    );
    expect(facts.get(SOURCE)).to.equal('203.0.113.7');
    expect(() => tab.keep({})).to.throw('the request tab is already kept');
    // Burst 5, one token for the submission: three more fit, and a debt of four leaves none.
    expect(await tab.take(3)).to.equal(undefined);
    tab.owe(4);
    expect(((await again()) as { error: { code: number } }).error.code).to.equal(-32005);
  });

  it('names the source even when submissions are not limited (the gate queues per source), keeping no tab', async () => {
    const { facts, tab } = await submit(
      { trusted_proxies: ['127.0.0.1'], reads: { per_source: { rate_per_second: 1, burst: 5 } } },
      { address: '127.0.0.1', headers: { 'x-forwarded-for': '2001:db8:1:2::7' } },
    );
    // IPv6 grouped by /48.
    expect(facts.get(SOURCE)).to.equal('2001:db8:1::/48');
    expect(() => tab.keep({})).to.not.throw();
  });
});

describe('rate-limit: refusals past a source’s allowance hold it', () => {
  const upstream = new Upstream({ url: 'http://127.0.0.1:1', connections: 1, headersTimeoutMs: 100, bodyTimeoutMs: 100 });
  after(() => upstream.close());

  const build = (options: Record<string, unknown>) =>
    rateLimit.create(rateLimit.parseOptions(OptionsReader.of('rate-limit', options)), pluginEnv(upstream, createLogger('error')));
  const ask = (plugin: Plugin, address: string, method = 'eth_chainId') =>
    plugin.handle!({
      request: { jsonrpc: '2.0', id: 1, method, params: [] },
      peer: { address, headers: {} },
      facts: new Facts(),
      tab: new RequestTab(),
    }) as { error: RpcError } | undefined;

  it('refuses as often as its allowance (the quota, at least 64 at once and 32 a second) without a hold, then holds; what it is told does not change', async () => {
    const plugin = await build({ reads: { per_source: { rate_per_second: 10, burst: 10 } } });
    for (let i = 0; i < 10; i++) expect(ask(plugin, '192.0.2.10')).to.equal(undefined);
    const refusals = Array.from({ length: 66 }, () => ask(plugin, '192.0.2.10')!.error);
    expect(refusals.slice(0, 63).filter((error) => error.holdMs !== undefined)).to.deep.equal([]);
    // The 64th leaves the allowance at 0: held until one is earned back (32 a second); then deeper.
    expect(refusals[63]!.holdMs).to.be.within(25, 33);
    expect(refusals[65]!.holdMs).to.be.within(85, 95);
    // The wait told is the bucket's alone: a token in about 100 ms, whatever the refusals.
    for (const error of refusals) expect((error.data as { retry_after_ms: number }).retry_after_ms).to.be.within(80, 101);
    // Another source is neither refused nor held.
    expect(ask(plugin, '192.0.2.11')).to.equal(undefined);
  });

  it('counts refusals by an in-flight cap against the same allowance', async () => {
    const plugin = await build({ max_in_flight_per_source: 1, reads: { per_source: { rate_per_second: 100, burst: 100 } } });
    expect(ask(plugin, '192.0.2.12')).to.equal(undefined);
    const refusals = Array.from({ length: 101 }, () => ask(plugin, '192.0.2.12')!.error);
    expect(new Set(refusals.map((error) => error.message))).to.deep.equal(
      new Set(['rate limited: too many requests in flight from this source; retry later']),
    );
    expect(refusals.slice(0, 99).filter((error) => error.holdMs !== undefined)).to.deep.equal([]);
    expect(refusals[99]!.holdMs).to.be.within(5, 11);
  });

  it('admits concurrent clients that wait as told at the quota: the allowance never takes their tokens', async () => {
    const plugin = await build({ reads: { per_source: { rate_per_second: 20, burst: 20 } } });
    let admitted = 0;
    const until = Date.now() + 1_000;
    // Eight clients of one source, each asking again after exactly the wait it was told.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          const verdict = ask(plugin, '192.0.2.13');
          if (verdict === undefined) admitted++;
          await new Promise((resolve) =>
            setTimeout(resolve, verdict === undefined ? 10 : (verdict.error.data as { retry_after_ms: number }).retry_after_ms),
          );
        }
      }),
    );
    // The burst, then 20 a second for a second: at least 30 of the 40 whatever the timers.
    expect(admitted).to.be.within(30, 41);
  });
});

describe('rate-limit: forwarding headers from a peer it does not trust (issue 37)', () => {
  const upstream = new Upstream({ url: 'http://127.0.0.1:1', connections: 1, headersTimeoutMs: 100, bodyTimeoutMs: 100 });
  after(() => upstream.close());

  it('warns once per peer that its X-Forwarded-For or Forwarded is ignored; a trusted proxy and a direct client, never', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('warn', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    const options = { trusted_proxies: ['192.0.2.1'], reads: { per_source: { rate_per_second: 1000, burst: 1000 } } };
    const plugin = await rateLimit.create(rateLimit.parseOptions(OptionsReader.of('rate-limit', options)), pluginEnv(upstream, log));
    const ask = (address: string, headers: Record<string, string>) =>
      plugin.handle!({
        request: { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
        peer: { address, headers },
        facts: new Facts(),
        tab: new RequestTab(),
      });
    ask('192.0.2.1', { 'x-forwarded-for': '198.51.100.7' });
    ask('192.0.2.20', {});
    expect(lines, 'trusted, or nothing forwarded').to.deep.equal([]);
    ask('192.0.2.30', { 'x-forwarded-for': '198.51.100.7' });
    ask('192.0.2.30', { forwarded: 'for=198.51.100.8' });
    expect(lines.map(({ level, msg, peer }) => ({ level, msg, peer }))).to.deep.equal([
      {
        level: 'warn',
        msg: 'rate-limit: forwarding headers from a peer not in trusted_proxies are ignored: every client behind it counts as that peer (add the proxy to rate-limit.trusted_proxies)',
        peer: '192.0.2.30',
      },
    ]);
  });
});
