import { expect } from 'chai';
import { connect } from 'node:net';
import { request } from 'undici';
import { parseConfig } from '../../src/config/load.js';
import { call, post, rpc } from '../../support/http.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { useAnvil } from '../helpers/el.js';
import { startIngressProcess } from '../../support/child.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

/** Writes `text` on a fresh connection and returns everything read until the ingress closes it. */
async function exchange(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.end(text);
  let reply = '';
  for await (const chunk of socket) reply += chunk;
  return reply;
}

async function get(url: string): Promise<{ status: number; type: string; text: string }> {
  const reply = await request(url);
  return { status: reply.statusCode, type: String(reply.headers['content-type']), text: await reply.body.text() };
}

/**
 * Every line is blank, a comment (HELP/TYPE) or `name{labels} value`, per the text exposition
 * format. Values parse as Prometheus parses them (Go's ParseFloat: NaN and Inf in any case;
 * prom-client writes an empty mean as "Nan").
 */
function expectExposition(text: string): void {
  const sample =
    /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?(\d+(\.\d+)?([eE][+-]?\d+)?|[Nn][Aa][Nn]|[+-]?[Ii][Nn][Ff])$/;
  for (const line of text.trimEnd().split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    expect(line, 'exposition line').to.match(sample);
  }
}

/** Waits (bounded) until the EL's head passes `after`. anvil has no push over HTTP. */
async function nextBlock(url: string, after: bigint): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (BigInt(await call<string>(url, 'eth_blockNumber')) <= after) {
    if (Date.now() > deadline) throw new Error('no new block');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('operator listener: /metrics, /livez, /readyz', () => {
  const anvil = useAnvil({ blockTimeSeconds: 1 });
  let node: StubEl;
  let ingress: TestIngress;

  before(async () => {
    node = await startStubEl({
      svc_metrics: (id) =>
        JSON.stringify({ jsonrpc: '2.0', id, result: { checkpoint_lag_commits: 3, retention_disk_guard_active: 0, observer_stranded: 0 } }),
    });
    ingress = await startTestIngress(
      testConfig(anvil.current.url, undefined, 'metrics_listen: 127.0.0.1:0\nreadiness_head_age_ms: 2500').replace(
        'upstreams:',
        `upstreams:\n  node: ${node.url}`,
      ),
    );
  });
  after(async () => {
    await ingress.shutdown();
    await node.close();
  });

  it("serves Prometheus text with the ingress's own metrics, methods labelled from a closed set", async () => {
    const proxied = await rpc(ingress.url, 'eth_chainId');
    await rpc(ingress.url, 'no_suchMethod');
    // A refusal that comes through a plugin's promise (the gate's), counted all the same.
    const refused = JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', ['0x02ab'])).text) as { error: { code: number } };
    const { status, type, text } = await get(`${ingress.metricsUrl}/metrics`);
    expect(status).to.equal(200);
    expect(type).to.match(/^text\/plain; version=0\.0\.4/);
    expectExposition(text);
    expect(text).to.include('svc_ingress_requests_total{method="eth_chainId",outcome="proxied"} 1');
    expect(text).to.include('svc_ingress_requests_total{method="other",outcome="refused"} 1');
    expect(text).to.include('svc_ingress_refusals_total{plugin="allowlist",code="-32601"} 1');
    expect(text).to.include(`svc_ingress_refusals_total{plugin="gate",code="${refused.error.code}"} 1`);
    expect(text).to.include('svc_ingress_requests_total{method="eth_sendRawTransaction",outcome="refused"} 1');
    // One timed call each, by method, in prom-client's histogram layout.
    expect(text).to.include('svc_ingress_request_duration_seconds_bucket{le="+Inf",method="eth_chainId"} 1\n');
    expect(text).to.include('svc_ingress_request_duration_seconds_count{method="eth_chainId"} 1\n');
    expect(text).to.include('svc_ingress_request_duration_seconds_count{method="other"} 1\n');
    // Only the proxied answer is streamed; its length as anvil declared it.
    expect(text).to.include(`svc_ingress_streamed_bytes_total ${Buffer.byteLength(proxied.text)}\n`);
    expect(text).to.not.include('no_suchMethod');
    expect(text).to.include('svc_ingress_process_resident_memory_bytes');
  });

  it('counts every refusal given before a method is read: transport ones by reason, and batch, unparsable and invalid bodies', async () => {
    const json = 'content-type: application/json\r\n';
    const requests = [
      'GET / HTTP/1.1\r\nhost: x\r\n\r\n',
      'GET / HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\n\r\n',
      'POST / HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\n{}',
      `POST / HTTP/1.1\r\nhost: x\r\n${json}content-encoding: gzip\r\ncontent-length: 2\r\n\r\n{}`,
      `POST / HTTP/1.1\r\nhost: x\r\n${json}content-length: 9999999\r\n\r\n`,
      `POST / HTTP/1.1\r\nhost: x\r\n${json}transfer-encoding: chunked\r\n\r\n0\r\n\r\n`,
      `POST / HTTP/1.1\r\nhost: x\r\n${json}expect: 200-ok\r\ncontent-length: 2\r\n\r\n{}`,
      `POST / HTTP/1.1\r\nhost: x\r\n${'x-a: 1\r\n'.repeat(101)}\r\n`,
      `POST / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'NOT HTTP\r\n\r\n',
    ];
    const statuses = await Promise.all(requests.map(async (text) => (await exchange(ingress.url, text)).split(' ')[1]));
    expect(statuses).to.deep.equal(['405', '400', '415', '415', '413', '411', '417', '431', '431', '400']);
    await post(ingress.url, '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]');
    await post(ingress.url, '[]');
    await post(ingress.url, '{"jsonrpc":"2.0","id":1,');
    await post(ingress.url, '{"jsonrpc":"2.0","id":1}');
    const { text } = await get(`${ingress.metricsUrl}/metrics`);
    for (const [reason, count] of Object.entries({
      method_not_allowed: 1,
      websocket: 1,
      unsupported_media_type: 1,
      unsupported_encoding: 1,
      payload_too_large: 1,
      length_required: 1,
      expectation_failed: 1,
      too_many_headers: 1,
      headers_too_large: 1,
      bad_request: 1,
    })) {
      expect(text).to.include(`svc_ingress_transport_refusals_total{reason="${reason}"} ${count}\n`);
    }
    expect(text).to.include('svc_ingress_body_refusals_total{reason="batch"} 2\n');
    expect(text).to.include('svc_ingress_body_refusals_total{reason="parse_error"} 1\n');
    expect(text).to.include('svc_ingress_body_refusals_total{reason="invalid_request"} 1\n');
  });

  it("exports the node's gauges it reports, and leaves out those it does not", async () => {
    const { text } = await get(`${ingress.metricsUrl}/metrics`);
    expect(text).to.include('svc_checkpoint_lag_commits 3');
    expect(text).to.include('svc_retention_disk_guard_active 0');
    expect(text).to.include('svc_observer_stranded 0');
    expect(text).to.not.include('svc_follower_stalled_seconds');
  });

  it('answers /livez from the process', async () => {
    expect(await get(`${ingress.metricsUrl}/livez`)).to.include({ status: 200, text: 'ok\n' });
  });

  it('is ready while the head moved within readiness_head_age_ms, for every prober alike; not once it stopped; ready again when it moves', async function () {
    this.timeout(20_000);
    const head = BigInt(await call<string>(anvil.current.url, 'eth_blockNumber'));
    await nextBlock(anvil.current.url, head);
    // Two probers a moment apart, the head unchanged between them: both ready (no flapping).
    const [first, second] = [await get(`${ingress.metricsUrl}/readyz`), await get(`${ingress.metricsUrl}/readyz`)];
    expect([first.status, second.status]).to.deep.equal([200, 200]);

    await call(anvil.current.url, 'evm_setIntervalMining', [0]);
    // Polled: the window (2.5 s here) is the ingress's own clock, nothing to await.
    const deadline = Date.now() + 8_000;
    let stalled = await get(`${ingress.metricsUrl}/readyz`);
    while (stalled.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      stalled = await get(`${ingress.metricsUrl}/readyz`);
    }
    expect(stalled.status).to.equal(503);
    expect(stalled.text).to.match(/^head has not advanced for [0-9]+ s \([0-9]+\)\n$/);

    const now = BigInt(await call<string>(anvil.current.url, 'eth_blockNumber'));
    await call(anvil.current.url, 'evm_setIntervalMining', [1]);
    await nextBlock(anvil.current.url, now);
    expect((await get(`${ingress.metricsUrl}/readyz`)).status).to.equal(200);
  });

  it('answers unknown paths with 404 and other HTTP methods with 405', async () => {
    expect((await get(`${ingress.metricsUrl}/`)).status).to.equal(404);
    const post = await request(`${ingress.metricsUrl}/metrics`, { method: 'POST' });
    await post.body.dump();
    expect(post.statusCode).to.equal(405);
  });

  it('keeps /livez 200 while the EL is down (/readyz 503), and logs one line when it goes and one when it is back', async function () {
    this.timeout(20_000);
    // The EL (anvil) behind a door that closes and opens again on the same port.
    const door = await startStubEl({}, { fallthrough: anvil.current.url });
    const ingress = await startIngressProcess(
      testConfig(door.url, undefined, 'metrics_listen: 127.0.0.1:0').replace('log_level: debug', 'log_level: info'),
    );
    try {
      const metricsUrl = String((await ingress.waitForLog('operator listener: /metrics, /livez, /readyz')).url);
      expect((await rpc(ingress.url, 'eth_chainId')).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
      await door.close();
      expect(JSON.parse((await rpc(ingress.url, 'eth_chainId')).text).error.code, 'EL down').to.equal(-32603);
      const down = await ingress.waitForLog('execution layer unreachable');
      expect(down).to.include({ level: 'warn', cause: 'ECONNREFUSED' });
      expect(JSON.stringify(down), 'no address').to.not.include(new URL(door.url).port);
      expect(await get(`${metricsUrl}/livez`), 'livez').to.include({ status: 200, text: 'ok\n' });
      expect(await get(`${metricsUrl}/readyz`), 'readyz').to.include({ status: 503, text: 'execution layer unreachable\n' });
      await rpc(ingress.url, 'eth_chainId');
      await door.reopen();
      expect((await rpc(ingress.url, 'eth_chainId')).text, 'EL back').to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
      const back = await ingress.waitForLog('execution layer reachable again');
      expect(back).to.include({ level: 'warn' });
      expect(back.down_ms).to.be.a('number');
      expect(
        ingress.lines.filter((line) => line.includes('execution layer unreachable')),
        'said once',
      ).to.have.length(1);
    } finally {
      ingress.child.kill('SIGTERM');
      await ingress.exited;
      await door.close();
    }
  });
});

describe('operator listener configuration', () => {
  it('has no listener without metrics_listen, and says so at start', async () => {
    const ingress = await startTestIngress(testConfig('http://127.0.0.1:1'));
    try {
      expect(ingress.metricsUrl).to.equal(undefined);
      expect(ingress.logs.join('')).to.include('no metrics_listen: /metrics and the health probes are not served');
    } finally {
      await ingress.shutdown();
    }
  });

  it('refuses a non-loopback metrics_listen unless metrics_public is set', () => {
    expect(() => parseConfig(testConfig('http://127.0.0.1:1', undefined, 'metrics_listen: 0.0.0.0:9100'))).to.throw(
      'metrics_listen: is not a loopback address: metrics are for local scraping; set metrics_public: true to expose them anyway',
    );
    expect(
      parseConfig(testConfig('http://127.0.0.1:1', undefined, 'metrics_listen: 0.0.0.0:9100\nmetrics_public: true')).metricsListen,
    ).to.deep.equal({ host: '0.0.0.0', port: 9100 });
  });

  it('refuses to start with EADDRINUSE when the operator port is taken (and leaves no listener behind: mocha would not exit)', async () => {
    const taken = await startTestIngress(testConfig('http://127.0.0.1:1', undefined, 'metrics_listen: 127.0.0.1:0'));
    const port = Number(new URL(taken.metricsUrl!).port);
    try {
      const yaml = testConfig('http://127.0.0.1:1', undefined, `metrics_listen: 127.0.0.1:${port}`);
      let failure: NodeJS.ErrnoException | undefined;
      await startTestIngress(yaml).catch((err: NodeJS.ErrnoException) => (failure = err));
      expect(failure?.code).to.equal('EADDRINUSE');
    } finally {
      await taken.shutdown();
    }
  });
});
