import { expect } from 'chai';
import { within } from '../../support/within.js';
import { Redis } from 'ioredis';
import { keccak256, Wallet } from 'ethers';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { freePort } from '../../support/ports.js';
import { rpc } from '../../support/http.js';
import { DEV_KEYS, devTransfer } from '../../support/keys.js';
import { Fleet } from '../../src/fleet.js';
import { createLogger } from '../../src/log.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { startRedis, startSentinelSet, type RedisServer, type SentinelSet } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';

/** An eth_chainId from `client`'s address to `url`: its HTTP status. */
async function readFrom(client: Agent, url: string): Promise<number> {
  const reply = await request(url, {
    dispatcher: client,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  });
  await reply.body.dump();
  return reply.statusCode;
}

describe('fleet mode: two ingress processes sharing one Redis', () => {
  const anvil = useAnvil();
  let redis: RedisServer;
  let first: IngressProcess;
  let second: IngressProcess;
  let client: Agent;
  /** A client of the fleet's Redis, to see what the instances synced. */
  let store: Redis;

  /** The fleet's counter window for these numbers: burst / rate. */
  const WINDOW_MS = 2_000;
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
    store = new Redis(redis.url);
    [first, second] = await Promise.all([startIngressProcess(yaml), startIngressProcess(yaml)]);
    await Promise.all([first.waitForLog('redis ready: shared state in use'), second.waitForLog('redis ready: shared state in use')]);
  });
  after(async () => {
    for (const p of [first, second]) p?.child.kill('SIGTERM');
    await Promise.all([first?.exited, second?.exited]);
    await client.close();
    store?.disconnect();
    await redis?.stop();
  });

  const read = (url: string) => readFrom(client, url);
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

  /** What the fleet's counters hold of a client's reads (both instances' syncs, every 50 ms). */
  const counted = async (address = '127.0.0.5') => {
    const keys = await store.keys(`svc-ingress:rl:reads:source:*:${address}`);
    return keys.length === 0 ? 0 : (await store.mget(...keys)).reduce((sum, value) => sum + Number(value), 0);
  };
  const untilCounted = (total: number, address = '127.0.0.5') =>
    until(
      () => counted(address),
      (value) => value >= total,
      `the fleet to count ${total} reads`,
    );

  it('holds one source to one bucket across both instances, once each has synced with the fleet', async () => {
    // An instance's first look at a source counts the current window's takes only (burst / rate,
    // 2 s here: fleet-sync.ts): started with at least a second of the window left, the takes below
    // and the second instance's first look fall in one window, as they would in a busy fleet.
    const into = Date.now() % WINDOW_MS;
    if (into > WINDOW_MS / 2) await sleep(WINDOW_MS - into);
    // The burst (4) spent at the first instance, and synced.
    expect([await read(first.url), await read(first.url), await read(first.url), await read(first.url)]).to.deep.equal([
      200, 200, 200, 200,
    ]);
    await untilCounted(4);
    // The second starts from a full bucket for a source it never saw; its sync learns the first's four.
    expect(await read(second.url)).to.equal(200);
    await untilCounted(5);
    expect(await read(second.url)).to.equal(429);
    expect(await read(first.url)).to.equal(429);
  });

  it("refuses with the wait for the next token, as one process does: a token bucket's, not a window's", async () => {
    const over = await request(second.url, {
      dispatcher: client,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    expect(over.statusCode).to.equal(429);
    // Two tokens a second, the source a token in debt at most: at most a second to wait.
    const { error } = (await over.body.json()) as { error: { data: { retry_after_ms: number } } };
    expect(error.data.retry_after_ms).to.be.within(1, 1_001);
    expect(over.headers['retry-after']).to.equal('1');
  });

  it("charges a first look in a new window the others' takes of the window before, as far as they are recent", async () => {
    // Issue 34, row E1: a source visiting the instances one window each passed 1.76x the limit,
    // each first look counting the current window's takes only.
    const visitor = new Agent({ localAddress: '127.0.0.6' });
    const readAs = (url: string) => readFrom(visitor, url);
    try {
      // The burst spent at the first instance late in a window, and synced...
      const into = Date.now() % WINDOW_MS;
      if (into < 0.8 * WINDOW_MS) await sleep(0.8 * WINDOW_MS - into);
      expect([await readAs(first.url), await readAs(first.url), await readAs(first.url), await readAs(first.url)]).to.deep.equal([
        200, 200, 200, 200,
      ]);
      await untilCounted(4, '127.0.0.6');
      // ...then the second instance's first look, early in the next window.
      await sleep(WINDOW_MS - (Date.now() % WINDOW_MS) + 20);
      expect(await readAs(second.url)).to.equal(200);
      await untilCounted(5, '127.0.0.6');
      expect(await readAs(second.url)).to.equal(429);
    } finally {
      await visitor.close();
    }
  });

  it('keeps serving on local fallbacks while Redis is down, counts it, and shares again once it is back', async function () {
    // Two processes, a Redis stop and restart and two transfers judged: under a full suite on two
    // cores this has taken past 30 s (twice in CI, each time passing alone in ~10 s).
    this.timeout(60_000);
    // Marked before the stop: a rate-limit sync may fail, and log its one warning, while Redis
    // is still going down.
    const mark = [first.lines.length, second.lines.length];
    await within(15_000, 'Redis stopped', redis.stop());
    // Reads are answered (under the local limiter) and submissions still judged.
    const raw = await transfer(DEV_KEYS[2]);
    expect(await within(15_000, 'a transfer judged while Redis is down', submit(first.url, raw))).to.have.property(
      'result',
      keccak256(raw),
    );
    // The first failure logged (at most one line each 10 s), whichever shared state it was:
    // the gate's ledger (its duplicate window, verdicts, in-flight counts) or a rate-limit sync.
    const warning = await within(
      15_000,
      'the redis unavailable warning',
      first.waitForLog(/^redis unavailable: (gate [a-z -]+|rate limit \S+ sync) uses its local fallback$/, mark[0]),
    );
    expect(warning.fallbacks).to.be.a('number').and.at.least(1);
    expect(JSON.stringify(warning)).to.not.include(String(redis.port));
    const operator = await first.waitForLog('operator listener: /metrics, /livez, /readyz');
    const metrics = await within(
      15_000,
      'the metrics',
      request(`${String(operator.url)}/metrics`).then((reply) => reply.body.text()),
    );
    expect(Number(/^svc_ingress_redis_fallbacks_total (\d+)$/m.exec(metrics)?.[1])).to.be.at.least(1);
    expect(await within(15_000, 'a read while Redis is down', read(second.url))).to.be.oneOf([200, 429]);

    await within(15_000, 'Redis restarted', redis.restart());
    await within(
      15_000,
      'both instances back on Redis',
      Promise.all([
        first.waitForLog('redis ready: shared state in use', mark[0]),
        second.waitForLog('redis ready: shared state in use', mark[1]),
      ]),
    );
    const again = await transfer(DEV_KEYS[3]);
    expect(await within(15_000, 'a transfer judged with Redis back', submit(second.url, again))).to.have.property(
      'result',
      keccak256(again),
    );
    expect((await within(15_000, 'the duplicate on the other instance', submit(first.url, again))).error).to.deep.equal({
      code: -32000,
      message: 'already known',
    });
  });
});

describe('fleet mode: a source visiting the instances in turn (issue 34, row E1)', () => {
  const anvil = useAnvil();
  let redis: RedisServer;
  let instances: TestIngress[] = [];
  const WINDOW_MS = 2_000;
  const WINDOWS = 8;

  before(async () => {
    redis = await startRedis();
    const plugins = '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 2, burst: 4}';
    const config = testConfig(anvil.current.url, plugins, `store: redis\nredis_url: ${redis.url}`).replace(
      'log_level: debug',
      'log_level: warn',
    );
    instances = await Promise.all(Array.from({ length: 4 }, () => startTestIngress(config)));
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.shutdown()));
    await redis?.stop();
  });

  it('holds a source visiting four instances one window each to 1.15x the fleet-wide limit (1.76x before)', async function () {
    this.timeout(60_000);
    const visitor = new Agent({ localAddress: '127.0.0.7' });
    let admitted = 0;
    try {
      await sleep(WINDOW_MS - (Date.now() % WINDOW_MS));
      const started = Date.now();
      for (let w = 0; w < WINDOWS; w++) {
        const end = started + (w + 1) * WINDOW_MS;
        while (Date.now() < end - 25) {
          if ((await readFrom(visitor, instances[w % instances.length]!.url)) === 200) admitted++;
          await sleep(20);
        }
      }
      // The bucket's burst, then its rate over the time taken.
      const limit = 4 + (2 * WINDOWS * WINDOW_MS) / 1_000;
      console.log(
        `      E1 visiting four instances a window each: ${admitted} admitted, the limit ${limit} (x${(admitted / limit).toFixed(2)})`,
      );
      expect(admitted / limit).to.be.at.most(1.15);
    } finally {
      await visitor.close();
    }
  });
});

// Reads never wait on the store: a Redis that takes every command and answers none (held by a
// relay) costs them nothing, and only the rate limits' background syncs reach it.
describe('fleet mode: reads while the shared store is silent', () => {
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

  it('answers reads while Redis holds every command: no read waits on the store', async () => {
    relay.hold = true;
    let commands = 0;
    relay.asked = () => commands++;
    const reads = 50;
    const started = Date.now();
    for (let id = 2; id < 2 + reads; id++) {
      expect(JSON.parse((await rpc(ingress.url, 'eth_chainId', [], id)).text)).to.deep.equal({ jsonrpc: '2.0', id, result: '0x1fcd' });
    }
    const elapsed = Date.now() - started;
    // A read that waited on the silent store would wait out its 250 ms command timeout: 12.5 s in all.
    expect(elapsed, 'ms for the fifty reads').to.be.below(5_000);
    // Only the background syncs reach the store, at most one each 50 ms, whatever the reads.
    expect(commands, 'commands sent to the silent Redis').to.be.at.most(Math.ceil(elapsed / 50) + 2);
  });
});

// Over a Redis that fails over: a primary, its replica and three Sentinels (real redis-server
// processes), two instances configured with `redis: { sentinels, name }`; the primary killed under load.
describe('fleet mode over Sentinel: the primary killed under load', () => {
  const anvil = useAnvil();
  let set: SentinelSet;
  let first: TestIngress;
  let second: TestIngress;

  const ready = (ingress: TestIngress, from = 0) =>
    ingress.logs.slice(from).some((line) => line.includes('redis ready: shared state in use'));

  before(async () => {
    set = await startSentinelSet();
    const plugins = `
  - allowlist
  - rate-limit:
      reads:
        per_source: {rate_per_second: 100000, burst: 100000}
  - gate:
      head_cache_ms: 0`;
    const fleet = `store: redis\nredis:\n  sentinels: [${set.sentinels.join(', ')}]\n  name: ${set.name}`;
    const yaml = testConfig(anvil.current.url, plugins, fleet);
    [first, second] = await Promise.all([startTestIngress(yaml), startTestIngress(yaml)]);
    await until(async () => ready(first) && ready(second), Boolean, 'both instances on the Sentinels’ master');
  });
  after(async () => {
    await first?.shutdown();
    await second?.shutdown();
    await set?.stop();
  });

  it('serves every read through the failover, and shares state again on the promoted replica', async () => {
    // Admitted by the first before the failover, and on the replica too.
    const raw = await devTransfer(DEV_KEYS[1]!, 0);
    expect(JSON.parse((await rpc(first.url, 'eth_sendRawTransaction', [raw])).text)).to.have.property('result', keccak256(raw));
    await set.replicated();

    let loading = true;
    const answers = { served: 0, failed: [] as string[] };
    const load = (async () => {
      for (let id = 1; loading; id++) {
        for (const ingress of [first, second]) {
          const text = (await rpc(ingress.url, 'eth_chainId', [], id)).text;
          if (text === JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' })) answers.served++;
          else answers.failed.push(text);
        }
      }
    })();
    const marks = [first.logs.length, second.logs.length];
    await set.killPrimary();
    await until(
      () => set.masterPort(),
      (port) => port === set.replicaPort,
      'the Sentinels to promote the replica',
    );
    await until(async () => ready(first, marks[0]) && ready(second, marks[1]), Boolean, 'both instances on the promoted replica');
    loading = false;
    await load;
    expect(answers.failed, 'reads that failed during the failover').to.deep.equal([]);
    expect(answers.served).to.be.above(10);
    // The duplicate window the first wrote before the failover, read by the second after it.
    expect(JSON.parse((await rpc(second.url, 'eth_sendRawTransaction', [raw])).text).error).to.deep.equal({
      code: -32000,
      message: 'already known',
    });
  });
});

// The same set with a password on the servers and the Sentinels alike (`password_env`).
describe('fleet mode over Sentinel with a password', () => {
  const anvil = useAnvil();
  const PASSWORD = 'sentinel-test-password-0123';
  let set: SentinelSet;
  let first: TestIngress;
  let second: TestIngress;

  before(async () => {
    set = await startSentinelSet(PASSWORD);
    process.env.SVC_TEST_REDIS_PASSWORD = PASSWORD;
    const fleet = `store: redis\nredis:\n  sentinels: [${set.sentinels.join(', ')}]\n  name: ${set.name}\n  password_env: SVC_TEST_REDIS_PASSWORD`;
    const yaml = testConfig(anvil.current.url, '\n  - allowlist\n  - gate:\n      head_cache_ms: 0', fleet);
    [first, second] = await Promise.all([startTestIngress(yaml), startTestIngress(yaml)]);
  });
  after(async () => {
    await first?.shutdown();
    await second?.shutdown();
    await set?.stop();
    delete process.env.SVC_TEST_REDIS_PASSWORD;
  });

  it('asks the Sentinels and the master with the password, and shares state through them; the password is never logged', async () => {
    // Without it, a Sentinel answers nothing.
    const [host, port] = set.sentinels[0]!.split(':');
    const stranger = connect({ host: host!, port: Number(port) });
    try {
      stranger.write(`SENTINEL get-master-addr-by-name ${set.name}\r\n`);
      const [answer] = (await once(stranger, 'data')) as [Buffer];
      expect(answer.toString()).to.match(/^-NOAUTH /);
    } finally {
      stranger.destroy();
    }
    const ready = (ingress: TestIngress) => ingress.logs.some((line) => line.includes('redis ready: shared state in use'));
    await until(async () => ready(first) && ready(second), Boolean, 'both instances on the master, through the Sentinels');
    const raw = await devTransfer(DEV_KEYS[1]!, 0);
    expect(JSON.parse((await rpc(first.url, 'eth_sendRawTransaction', [raw])).text)).to.have.property('result', keccak256(raw));
    expect(JSON.parse((await rpc(second.url, 'eth_sendRawTransaction', [raw])).text).error).to.deep.equal({
      code: -32000,
      message: 'already known',
    });
    expect([...first.logs, ...second.logs].filter((line) => line.includes(PASSWORD))).to.deep.equal([]);
  });
});

describe('fleet mode: what an unreachable Redis logs (fleet.ts)', () => {
  it('logs the first connection error and the first fallback, neither hiding the other', async () => {
    const lines: Array<{ msg: string }> = [];
    let logged!: () => void;
    const firstLine = new Promise<void>((resolve) => (logged = resolve));
    const write = (line: string) => {
      lines.push(JSON.parse(line) as { msg: string });
      logged();
    };
    const fleet = new Fleet({ store: 'redis', redisUrl: `redis://127.0.0.1:${await freePort()}` }, createLogger('warn', write));
    try {
      await within(5_000, 'the connection error', firstLine);
      const fallback = () =>
        fleet.either(
          'rate limit reads sync',
          () => Promise.reject(new Error('down')),
          () => 'local',
        );
      expect(await fallback()).to.equal('local');
      expect(await fallback()).to.equal('local');
      expect(lines.map((line) => line.msg)).to.deep.equal([
        'redis connection error',
        'redis unavailable: rate limit reads sync uses its local fallback',
      ]);
      expect(fleet.fallbacks).to.equal(2);
    } finally {
      await fleet.close();
    }
  });
});
