/**
 * JSON-RPC over WebSocket (issue 38, first part): each message a request served as a POST's
 * body is, through the same chain; the bounds of a connection; what ethers and viem see.
 */
import { once } from 'node:events';
import { expect } from 'chai';
import { WebSocketProvider } from 'ethers';
import { createPublicClient, webSocket } from 'viem';
import WebSocket from 'ws';
import { call, receiptOf } from '../../support/http.js';
import { deployEmitter, EMITTED, emit, topicOf } from '../../support/log-emitter.js';
import { HANG, startStubEl } from '../../support/stub-el.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const PLUGINS = `
  - batch-refuse
  - size-limit
  - allowlist
  - rate-limit:
      reads: {per_source: {rate_per_second: 1, burst: 20}}`;

/** Quotas no test here reaches: these tests are about subscriptions, not prices. */
const ROOMY = PLUGINS.replace('rate_per_second: 1, burst: 20', 'rate_per_second: 10000, burst: 10000');

/** A connected client that reads answers by id. */
async function connect(url: string, headers: Record<string, string> = {}, localAddress?: string) {
  const ws = new WebSocket(url.replace('http:', 'ws:'), { headers, ...(localAddress === undefined ? {} : { localAddress }) });
  const answers: string[] = [];
  const waiting: Array<() => void> = [];
  ws.on('message', (data) => {
    answers.push(data.toString());
    for (const wake of waiting.splice(0)) wake();
  });
  await once(ws, 'open');
  const next = async (count = 1): Promise<string[]> => {
    while (answers.length < count) await new Promise<void>((resolve) => waiting.push(resolve));
    return answers.splice(0, count);
  };
  return { ws, next, send: (text: string) => ws.send(text) };
}

describe('WebSocket: JSON-RPC on the public listener (websocket.ts)', () => {
  const anvil = useAnvil();
  let ingress: TestIngress;
  before(async () => {
    ingress = await startTestIngress(testConfig(anvil.current.url, PLUGINS).replace('log_level: debug', 'log_level: error'));
  });
  after(() => ingress.shutdown());

  it('answers each message as the same POST is answered, byte for byte, by id', async () => {
    const client = await connect(ingress.url);
    client.send('{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}');
    expect(await client.next()).to.deep.equal(['{"jsonrpc":"2.0","id":7,"result":"0x1fcd"}']);
    client.send('{"jsonrpc":"2.0","id":"b","method":"eth_getBalance","params":["0x000000000000000000000000000000000000dEaD","latest"]}');
    client.send(
      '{"jsonrpc":"2.0","id":"c","method":"eth_call","params":[{"to":"0x000000000000000000000000000000000000dEaD","data":"0x"},"latest"]}',
    );
    const both = (await client.next(2)).map((text) => JSON.parse(text) as { id: string; result: string });
    expect(both.map((a) => a.id).sort()).to.deep.equal(['b', 'c']);
    expect(both.find((a) => a.id === 'c')!.result).to.equal('0x');
    client.ws.close();
  });

  it('refuses what a POST is refused: a batch, an unknown method, a body that is not JSON', async () => {
    const client = await connect(ingress.url);
    const answer = async (text: string) => {
      client.send(text);
      return JSON.parse((await client.next())[0]!) as unknown;
    };
    expect(await answer('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}]'), 'a batch').to.have.nested.property(
      '[0].error.code',
      -32600,
    );
    expect(await answer('{"jsonrpc":"2.0","id":2,"method":"admin_peers","params":[]}'), 'unknown').to.have.nested.property(
      'error.code',
      -32601,
    );
    expect(await answer('{"jsonrpc"'), 'not JSON').to.have.nested.property('error.code', -32700);
    client.ws.close();
  });

  it("prices every message as a request: past the source's burst, -32005", async () => {
    const limited = await startTestIngress(
      testConfig(anvil.current.url, PLUGINS.replace('burst: 20', 'burst: 2')).replace('log_level: debug', 'log_level: error'),
    );
    try {
      const client = await connect(limited.url);
      for (let id = 1; id <= 3; id++) client.send(`{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`);
      const byId = new Map(
        (await client.next(3))
          .map((text) => JSON.parse(text) as { id: number; error?: { code: number } })
          .map((a) => [a.id, a.error?.code ?? 'ok']),
      );
      expect([1, 2, 3].map((id) => byId.get(id))).to.deep.equal(['ok', 'ok', -32005]);
      client.ws.close();
    } finally {
      await limited.shutdown();
    }
  });

  it('charges a large message what the same POST body costs before reading it: 1 token per 4 KiB past the first', async () => {
    const limited = await startTestIngress(testConfig(anvil.current.url, PLUGINS).replace('log_level: debug', 'log_level: error'));
    try {
      const client = await connect(limited.url);
      // 100 KiB: its body takes the whole burst of 20 (the most one charge takes), so neither it
      // nor a small request after it finds a token; as 1-token messages, both would pass.
      client.send(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["${'a'.repeat(100 * 1024)}"]}`);
      const large = JSON.parse((await client.next())[0]!) as { error?: { code: number } };
      client.send('{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[]}');
      const small = JSON.parse((await client.next())[0]!) as { error?: { code: number } };
      expect([large.error?.code, small.error?.code]).to.deep.equal([-32005, -32005]);
      client.ws.close();
    } finally {
      await limited.shutdown();
    }
  });

  it('holds a connection that keeps sending while refused, as over HTTP: every message answered, past the allowance later', async function () {
    this.timeout(20_000);
    const limited = await startTestIngress(
      testConfig(anvil.current.url, PLUGINS.replace('rate_per_second: 1, burst: 20', 'rate_per_second: 1, burst: 1')).replace(
        'log_level: debug',
        'log_level: error',
      ),
    );
    try {
      const client = await connect(limited.url);
      const started = performance.now();
      // 1 served, then refusals: the first 64 at once (the allowance), the rest 32 a second.
      for (let id = 1; id <= 130; id++) client.send(`{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`);
      const answers = (await client.next(130)).map((text) => JSON.parse(text) as { id: number; error?: { code: number } });
      const elapsed = performance.now() - started;
      expect(new Set(answers.map((a) => a.id)).size, 'every message answered once').to.equal(130);
      // The bucket refills one a second meanwhile: a few more are served.
      expect(answers.filter((a) => a.error?.code === -32005)).to.have.length.at.least(124);
      // ~65 refusals past the allowance at 32 a second: about two seconds of holds.
      expect(elapsed).to.be.above(1_000);
      client.ws.close();
    } finally {
      await limited.shutdown();
    }
  });

  it('serves ethers WebSocketProvider and viem webSocket() reads', async () => {
    const url = ingress.url.replace('http:', 'ws:');
    const provider = new WebSocketProvider(url);
    try {
      expect(Number((await provider.getNetwork()).chainId)).to.equal(8141);
      expect(await provider.getBlockNumber()).to.be.a('number');
    } finally {
      await provider.destroy();
    }
    const client = createPublicClient({ transport: webSocket(url) });
    expect(await client.getChainId()).to.equal(8141);
    await (await client.transport.getRpcClient()).close();
  });

  it('closes a connection that sends a message over the body cap with 1009', async () => {
    const client = await connect(ingress.url);
    client.send(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["${'a'.repeat(600 * 1024)}"]}`);
    const [code] = (await once(client.ws, 'close')) as [number];
    expect(code).to.equal(1009);
  });

  it('refuses a handshake from an origin CORS does not allow, 403', async () => {
    const strict = await startTestIngress(
      testConfig(anvil.current.url, PLUGINS, 'cors:\n  allowed_origins: ["https://app.example.org"]').replace(
        'log_level: debug',
        'log_level: error',
      ),
    );
    try {
      const refused = new WebSocket(strict.url.replace('http:', 'ws:'), { headers: { origin: 'https://evil.example' } });
      const [, response] = (await once(refused, 'unexpected-response')) as [unknown, { statusCode: number }];
      expect(response.statusCode).to.equal(403);
      const allowed = await connect(strict.url, { origin: 'https://app.example.org' });
      allowed.ws.close();
    } finally {
      await strict.shutdown();
    }
  });

  it('answers past 32 unanswered requests on one connection with -32005 at once; closing releases their EL requests', async () => {
    const el = await startStubEl({ eth_blockNumber: () => HANG }, { fallthrough: anvil.current.url });
    const hung = await startTestIngress(
      testConfig(el.url, PLUGINS.replace('burst: 20', 'burst: 100'))
        .replace('max_in', 'max_in')
        .replace('log_level: debug', 'log_level: error'),
    );
    try {
      const client = await connect(hung.url);
      for (let id = 1; id <= 33; id++) client.send(`{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[]}`);
      const [over] = await client.next();
      expect(JSON.parse(over!)).to.deep.include({ id: 33 });
      expect(JSON.parse(over!).error.code).to.equal(-32005);
      client.ws.close();
      await once(client.ws, 'close');
      // The 32 requests held at the EL were aborted: the ingress drains at once.
      await hung.shutdown();
    } finally {
      await el.close();
    }
  });

  it('closes its connections with 1001 when it shuts down', async () => {
    const closing = await startTestIngress(testConfig(anvil.current.url, PLUGINS).replace('log_level: debug', 'log_level: error'));
    const client = await connect(closing.url);
    const closed = once(client.ws, 'close');
    await closing.shutdown();
    const [code, reason] = (await closed) as [number, Buffer];
    expect([code, reason.toString()]).to.deep.equal([1001, 'the endpoint is shutting down']);
  });
});

describe('WebSocket: newHeads and logs subscriptions fed by one follower (websocket.ts, head-feed.ts, log-feed.ts)', () => {
  const anvil = useAnvil({ blockTimeSeconds: 1 });
  let ingress: TestIngress;
  before(async () => {
    ingress = await startTestIngress(
      testConfig(anvil.current.url, ROOMY, 'metrics_listen: 127.0.0.1:0').replace('log_level: debug', 'log_level: error'),
    );
  });
  after(() => ingress.shutdown());

  /** Subscriptions the ingress holds, as /metrics says. */
  const subscriptionsOpen = async () => {
    const text = await (await fetch(`${ingress.metricsUrl}/metrics`)).text();
    return Number(/^svc_ingress_websocket_subscriptions (\d+)$/m.exec(text)![1]);
  };

  const subscribe = async (client: Awaited<ReturnType<typeof connect>>, params: unknown[] = ['newHeads'], id = 1) => {
    client.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_subscribe', params }));
    return JSON.parse((await client.next())[0]!) as { result?: string; error?: { code: number; message: string } };
  };

  it('announces each new block once, in order, as its header (no transactions), to the subscription named', async () => {
    const client = await connect(ingress.url);
    const { result: id } = await subscribe(client);
    expect(id).to.match(/^0x[0-9a-f]{32}$/);
    const heads = (await client.next(2)).map(
      (text) => JSON.parse(text) as { method: string; params: { subscription: string; result: Record<string, string> } },
    );
    expect(heads.map((h) => [h.method, h.params.subscription])).to.deep.equal([
      ['eth_subscription', id],
      ['eth_subscription', id],
    ]);
    const [first, second] = heads.map((h) => h.params.result);
    expect(BigInt(second!.number!) - BigInt(first!.number!)).to.equal(1n);
    expect(second!.parentHash).to.equal(first!.hash);
    expect(first).to.include.keys('hash', 'parentHash', 'stateRoot', 'timestamp', 'baseFeePerGas');
    expect(first).to.not.have.any.keys('transactions', 'uncles', 'size');
    client.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_unsubscribe', params: [id] }));
    client.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'eth_unsubscribe', params: [id] }));
    const answers = (await client.next(2)).map((text) => JSON.parse(text) as { id?: number; result?: boolean });
    // A head may still have been on its way: the two answers are read among what came.
    expect(answers.filter((a) => a.id !== undefined).map((a) => [a.id, a.result])).to.deep.include.members([[2, true]]);
    client.ws.close();
  });

  it('refuses another kind, criteria geth refuses, a 17th subscription on one connection, and eth_subscribe over HTTP', async () => {
    const client = await connect(ingress.url);
    expect((await subscribe(client, ['newPendingTransactions'])).error).to.deep.equal({
      code: -32602,
      message:
        'invalid params: subscriptions of "newPendingTransactions" are not served: newHeads and logs only; poll with eth_newFilter or eth_newBlockFilter and eth_getFilterChanges, or with eth_getLogs',
    });
    expect((await subscribe(client, ['logs', { topics: [7] }])).error).to.deep.equal({
      code: -32602,
      message: 'invalid argument 1: invalid topic(s)',
    });
    expect((await subscribe(client, ['logs', { fromBlock: 'pending' }])).error).to.deep.equal({
      code: -32602,
      message: 'pending logs are not supported',
    });
    for (let i = 0; i < 16; i++) expect((await subscribe(client, ['newHeads'], 10 + i)).result).to.be.a('string');
    expect((await subscribe(client, ['newHeads'], 99)).error).to.deep.equal({
      code: -32005,
      message: 'too many subscriptions on this connection (at most 16): unsubscribe one, or open another connection',
    });
    client.ws.close();
    const overHttp = await fetch(ingress.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}',
    });
    expect(((await overHttp.json()) as { error: { code: number } }).error.code).to.equal(-32601);
  });

  it('holds one source to 64 subscriptions across its connections; another source still subscribes', async () => {
    const connections = await Promise.all(Array.from({ length: 5 }, () => connect(ingress.url)));
    const outcomes: Array<string | number> = [];
    for (const client of connections) {
      for (let i = 0; i < 16; i++) {
        const answer = await subscribe(client, ['newHeads'], 100 + i);
        outcomes.push(answer.result === undefined ? answer.error!.code : 'ok');
      }
    }
    expect(outcomes.filter((o) => o === 'ok')).to.have.length(64);
    const last = connections.at(-1)!;
    expect((await subscribe(last, ['newHeads'], 999)).error).to.deep.equal({
      code: -32005,
      message: 'too many subscriptions from this source (at most 64): unsubscribe one',
    });
    const other = await connect(ingress.url, {}, '127.0.0.2');
    expect((await subscribe(other)).result, 'another source').to.be.a('string');
    // A connection closed gives its subscriptions back.
    connections[0]!.ws.close();
    await once(connections[0]!.ws, 'close');
    let again: { result?: string } = {};
    for (let i = 0; i < 100 && again.result === undefined; i++) {
      again = await subscribe(last, ['newHeads'], 1000 + i);
      if (again.result === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(again.result, 'once the first connection closed').to.be.a('string');
    for (const client of [...connections.slice(1), other]) client.ws.close();
  });

  it('serves ethers provider.on("block") and viem watchBlocks over webSocket()', async () => {
    const url = ingress.url.replace('http:', 'ws:');
    const provider = new WebSocketProvider(url);
    try {
      const block = await new Promise<number>((resolve) => void provider.on('block', resolve));
      expect(block).to.be.a('number');
    } finally {
      await provider.destroy();
    }
    const client = createPublicClient({ transport: webSocket(url) });
    const seen = await new Promise<bigint>((resolve, reject) => {
      const stop = client.watchBlocks({
        onBlock: (block) => {
          stop();
          resolve(block.number);
        },
        onError: reject,
      });
    });
    expect(seen > 0n).to.equal(true);
    await (await client.transport.getRpcClient()).close();
  });

  it('keeps its subscriptions and connections through a reload', async () => {
    const client = await connect(ingress.url);
    const { result: id } = await subscribe(client);
    await ingress.reload(ingress.config);
    const [first, second] = (await client.next(2)).map(
      (text) => JSON.parse(text) as { params: { subscription: string; result: { number: string } } },
    );
    expect([first!.params.subscription, second!.params.subscription]).to.deep.equal([id, id]);
    expect(BigInt(second!.params.result.number) - BigInt(first!.params.result.number)).to.equal(1n);
    client.send('{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}');
    // A head may come first.
    let answer: { id?: number; result?: string } = {};
    for (let i = 0; i < 3 && answer.id === undefined; i++) answer = JSON.parse((await client.next())[0]!) as typeof answer;
    expect(answer).to.deep.equal({ jsonrpc: '2.0', id: 7, result: '0x1fcd' });
    client.ws.close();
  });

  it("sends each log a logs subscription's filter matches, as eth_getLogs writes it", async () => {
    const emitter = await deployEmitter(anvil.current.url);
    const client = await connect(ingress.url);
    const { result: id } = await subscribe(client, ['logs', { address: emitter, topics: [EMITTED, [topicOf(1), topicOf(3)]] }]);
    const hashes: string[] = [];
    for (const n of [1, 2, 3]) hashes.push(await emit(anvil.current.url, emitter, n));
    const notes = (await client.next(2)).map(
      (text) => JSON.parse(text) as { params: { subscription: string; result: { topics: string[]; blockHash: string } } },
    );
    expect(notes.map((n) => [n.params.subscription, n.params.result.topics[1]])).to.deep.equal([
      [id, topicOf(1)],
      [id, topicOf(3)],
    ]);
    const block = await call<Array<{ topics: string[] }>>(anvil.current.url, 'eth_getLogs', [
      { blockHash: notes[1]!.params.result.blockHash },
    ]);
    expect(block.find((log) => log.topics[1] === topicOf(3))).to.deep.equal(notes[1]!.params.result);
    expect((await receiptOf(anvil.current.url, hashes[1]!)).status).to.equal('0x1');
    client.ws.close();
  });

  it('serves viem watchEvent and ethers provider.on(filter) over webSocket()', async () => {
    const emitter = await deployEmitter(anvil.current.url);
    const before = await subscriptionsOpen();
    const url = ingress.url.replace('http:', 'ws:');
    const client = createPublicClient({ transport: webSocket(url) });
    const provider = new WebSocketProvider(url);
    try {
      const viemLog = new Promise<string>((resolve, reject) => {
        const stop = client.watchEvent({
          address: emitter as `0x${string}`,
          onLogs: (logs) => {
            stop();
            resolve(logs[0]!.topics[1]!);
          },
          onError: reject,
        });
      });
      const ethersLog = new Promise<string>(
        (resolve) => void provider.on({ address: emitter, topics: [EMITTED] }, (log) => resolve(log.topics[1])),
      );
      // Both have subscribed once the ingress holds their two subscriptions.
      for (let i = 0; (await subscriptionsOpen()) < before + 2; i++) {
        if (i > 100) throw new Error('the two clients did not subscribe');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await emit(anvil.current.url, emitter, 7);
      expect(await Promise.all([viemLog, ethersLog])).to.deep.equal([topicOf(7), topicOf(7)]);
    } finally {
      await provider.destroy();
      await (await client.transport.getRpcClient()).close();
    }
  });

  it('asks the EL the same whether one client subscribes or sixty (the most one source may)', async function () {
    this.timeout(20_000);
    const el = await startStubEl({}, { fallthrough: anvil.current.url });
    const counted = await startTestIngress(testConfig(el.url, ROOMY).replace('log_level: debug', 'log_level: error'));
    /** Requests the EL got while `subscribers` listened for three heads. */
    const asked = async (subscribers: number) => {
      const clients = await Promise.all(Array.from({ length: subscribers }, () => connect(counted.url)));
      for (const client of clients) await subscribe(client);
      const before = el.received.length;
      await Promise.all(clients.map((client) => client.next(3)));
      const during = el.received.length - before;
      for (const client of clients) client.ws.close();
      return during;
    };
    try {
      const one = await asked(1);
      const many = await asked(60);
      expect(many, `one subscriber: ${one} EL requests; 60: ${many}`).to.be.at.most(one + 4);
    } finally {
      await counted.shutdown();
      await el.close();
    }
  });
});

describe('WebSocket: a client that stops reading (websocket.ts)', () => {
  const anvil = useAnvil();

  it('is closed with 1008 and the reason once 32 MiB of answers wait for it, never buffered without bound', async function () {
    this.timeout(30_000);
    const big = `"0x${'ab'.repeat(1024 * 1024)}"`;
    const el = await startStubEl(
      { eth_getCode: (id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${big}}` },
      { fallthrough: anvil.current.url },
    );
    const ingress = await startTestIngress(
      testConfig(el.url, ROOMY, 'metrics_listen: 127.0.0.1:0').replace('log_level: debug', 'log_level: error'),
    );
    try {
      const ws = new WebSocket(ingress.url.replace('http:', 'ws:'));
      await once(ws, 'open');
      // The client stops reading: what the ingress sends piles up at its end.
      (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
      for (let id = 1; id <= 32; id++) {
        ws.send(`{"jsonrpc":"2.0","id":${id},"method":"eth_getCode","params":["0x000000000000000000000000000000000000dEaD","latest"]}`);
      }
      // Each answer is 2 MiB: 32 of them pass the bound. Bounded wait for the ingress to say so.
      for (let i = 0; ; i++) {
        const text = await (await fetch(`${ingress.metricsUrl}/metrics`)).text();
        if (text.includes('svc_ingress_websocket_closed_total{reason="slow_consumer"} 1')) break;
        if (i > 200) throw new Error('not closed as a slow consumer within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const closed = once(ws, 'close');
      (ws as unknown as { _socket: { resume(): void } })._socket.resume();
      const [code, reason] = (await closed) as [number, Buffer];
      expect([code, reason.toString()]).to.deep.equal([1008, 'slow consumer: more than 33554432 bytes of answers unsent']);
    } finally {
      await ingress.shutdown();
      await el.close();
    }
  });
});
