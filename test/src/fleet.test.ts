import { expect } from 'chai';
import { keccak256, Wallet } from 'ethers';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { rpc } from '../../support/http.js';
import { DEV_KEYS } from '../../support/keys.js';
import { within } from '../../support/within.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';

describe('fleet mode: two ingress processes sharing one Redis', () => {
  const anvil = useAnvil();
  let redis: RedisServer;
  let first: IngressProcess;
  let second: IngressProcess;
  let client: Agent;

  const plugins = `
  - batch-refuse
  - allowlist
  - rate-limit:
      reads:
        per_source: {rate_per_second: 2, burst: 4}
  - gate:
      head_cache_ms: 0`;

  before(async () => {
    client = new Agent({ localAddress: '127.0.0.5' });
    redis = await startRedis();
    const yaml = testConfig(anvil.current.url, plugins, `store: redis\nredis_url: ${redis.url}\nmetrics_listen: 127.0.0.1:0`).replace(
      'log_level: debug',
      'log_level: info',
    );
    [first, second] = await Promise.all([startIngressProcess(yaml), startIngressProcess(yaml)]);
    await Promise.all([first.waitForLog('redis ready: shared state in use'), second.waitForLog('redis ready: shared state in use')]);
  });
  after(async () => {
    for (const p of [first, second]) p?.child.kill('SIGTERM');
    await Promise.all([first?.exited, second?.exited]);
    await client.close();
    await redis?.stop();
  });

  const read = async (url: string) => {
    const reply = await request(url, {
      dispatcher: client,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    await reply.body.dump();
    return reply.statusCode;
  };
  const transfer = (key: string, nonce = 0) =>
    new Wallet(key).signTransaction({
      chainId: 8141,
      nonce,
      to: RECIPIENT,
      value: 1n,
      gasLimit: 21_000,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 0n,
      type: 2,
    });
  const submit = async (url: string, raw: string) => JSON.parse((await rpc(url, 'eth_sendRawTransaction', [raw])).text);

  it('refuses on the second instance a duplicate the first admitted: "already known"', async () => {
    const raw = await transfer(DEV_KEYS[1]);
    expect(await submit(first.url, raw)).to.have.property('result', keccak256(raw));
    expect((await submit(second.url, raw)).error).to.deep.equal({ code: -32000, message: 'already known' });
  });

  it('holds one source to one bucket across both instances', async () => {
    expect([await read(first.url), await read(second.url), await read(first.url), await read(second.url)]).to.deep.equal([
      200, 200, 200, 200,
    ]);
    expect(await read(second.url)).to.equal(429);
    expect(await read(first.url)).to.equal(429);
  });

  it('lets the burst out at once, then holds the source to its sustained rate: the bucket comes back after burst / rate', async () => {
    const over = await request(first.url, {
      dispatcher: client,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    expect(over.statusCode).to.equal(429);
    // 4 tokens at 2 per second: the window the previous test spent, moments ago, lasts 2 s (a
    // 1 s window would let 4 per second through, twice the sustained rate).
    const { error } = (await over.body.json()) as { error: { data: { retry_after_ms: number } } };
    expect(error.data.retry_after_ms).to.be.within(1_000, 2_000);
    expect(over.headers['retry-after']).to.equal('2');
  });

  it('keeps serving on local fallbacks while Redis is down, counts it, and shares again once it is back', async () => {
    await redis.stop();
    const mark = [first.lines.length, second.lines.length];
    // Reads are answered (under the local limiter) and submissions still judged.
    const raw = await transfer(DEV_KEYS[2]);
    expect(await submit(first.url, raw)).to.have.property('result', keccak256(raw));
    const warning = await first.waitForLog('redis unavailable: gate duplicate window uses its local fallback', mark[0]);
    expect(warning.fallbacks).to.be.a('number').and.at.least(1);
    expect(JSON.stringify(warning)).to.not.include(String(redis.port));
    const operator = await first.waitForLog('operator listener: /metrics, /livez, /readyz');
    const metrics = await (await request(`${String(operator.url)}/metrics`)).body.text();
    expect(Number(/^svc_ingress_redis_fallbacks_total (\d+)$/m.exec(metrics)?.[1])).to.be.at.least(1);
    expect(await read(second.url)).to.be.oneOf([200, 429]);

    await redis.restart();
    await Promise.all([
      first.waitForLog('redis ready: shared state in use', mark[0]),
      second.waitForLog('redis ready: shared state in use', mark[1]),
    ]);
    const again = await transfer(DEV_KEYS[3]);
    expect(await submit(second.url, again)).to.have.property('result', keccak256(again));
    expect((await submit(first.url, again)).error).to.deep.equal({ code: -32000, message: 'already known' });
  });
});

// A client that leaves while a plugin is still deciding (here rate-limit, waiting on a Redis that
// does not answer) must not cost the ingress its upstream connection: the read it abandoned is
// never streamed into its closed response, and the next caller is served on the same pool.
describe('fleet mode: a client that leaves while the shared store is slow', () => {
  const anvil = useAnvil();
  let redis: RedisServer;
  let ingress: TestIngress;
  /** Between the ingress and Redis: passes bytes on until `hold` is set, then keeps them. */
  const relay = { hold: false, asked: undefined as undefined | (() => void) };
  const sockets = new Set<Socket>();
  const relayServer = createTcpServer((fromIngress) => {
    const toRedis = connect(redis.port, '127.0.0.1');
    for (const s of [fromIngress, toRedis]) sockets.add(s.on('error', () => {}));
    toRedis.pipe(fromIngress);
    fromIngress.on('data', (chunk: Buffer) => {
      if (!relay.hold) return void toRedis.write(chunk);
      relay.asked?.();
    });
  });

  before(async () => {
    relay.hold = false;
    redis = await startRedis();
    await new Promise<void>((resolve) => relayServer.listen(0, '127.0.0.1', resolve));
    const relayUrl = `redis://127.0.0.1:${(relayServer.address() as AddressInfo).port}`;
    const plugins = `
  - allowlist
  - rate-limit:
      reads:
        per_source: {rate_per_second: 1000, burst: 1000}`;
    // One pooled connection to the EL: a read that held it for good would stall every later one.
    const yaml = testConfig(anvil.current.url, plugins, `store: redis\nredis_url: ${relayUrl}`).replace(
      'body_timeout_ms: 2000',
      'body_timeout_ms: 2000\n  connections: 1',
    );
    ingress = await startTestIngress(yaml);
    // Commands are never queued while the connection is not ready (they fall back at once, asking
    // nothing of the relay): wait for it, bounded, before holding the relay. Under a loaded
    // machine the connection can take longer than the first request.
    for (const deadline = Date.now() + 5_000; !ingress.logs.some((line) => line.includes('redis ready: shared state in use')); ) {
      expect(Date.now(), 'redis never ready').to.be.below(deadline);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(JSON.parse((await rpc(ingress.url, 'eth_chainId')).text)).to.have.property('result', '0x1fcd');
  });
  after(async () => {
    await ingress?.shutdown();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => relayServer.close(resolve));
    await redis?.stop();
  });

  it('serves the next read on its one upstream connection after a client left mid-verdict', async () => {
    relay.hold = true;
    const asked = new Promise<void>((resolve) => (relay.asked = resolve));
    const client = connect(ingress.port, '127.0.0.1');
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    client.write(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    // The read is in the chain, its bucket asked of Redis, which does not answer: the client goes.
    await within(5_000, 'the rate-limit bucket asked of Redis', asked);
    client.destroy();
    // Redis still silent: after its command timeout each read falls back to the local bucket.
    const next = await within(5_000, 'the next read', rpc(ingress.url, 'eth_chainId', [], 2));
    expect(JSON.parse(next.text)).to.deep.equal({ jsonrpc: '2.0', id: 2, result: '0x1fcd' });
  });
});
