/**
 * Attacks on the running ingress, as an internet client would make them (issue 15's rows, loopback
 * only, bounded in time): each asserts what the attacker gets and that everyone else is still served.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { post, rpc } from '../../support/http.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

/** A raw client that keeps its own side open when the server closes its side (as an attacker would). */
async function rawClient(
  port: number,
): Promise<{ socket: Socket; received: () => string; ended: Promise<unknown>; closed: Promise<unknown> }> {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', () => {});
  // Not events.once: it rejects on 'error', and writing to a socket the server closed is one.
  return {
    socket,
    received: () => text,
    ended: new Promise((resolve) => socket.on('end', resolve)),
    closed: new Promise((resolve) => socket.on('close', resolve)),
  };
}

/** A POST from a given loopback address: each address is its own source. */
async function postAs(url: string, from: string, body: string): Promise<{ status: number; text: string }> {
  const agent = new Agent({ localAddress: from });
  try {
    const reply = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent });
    return { status: reply.statusCode, text: await reply.body.text() };
  } finally {
    await agent.close();
  }
}

const jsonRefusal = (message: string) => JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });

describe('abuse: transport attacks on the running ingress', () => {
  let el: StubEl;
  let ingress: TestIngress;

  before(async () => {
    el = await startStubEl({ eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }) });
    ingress = await startTestIngress(
      testConfig(el.url, '\n  - batch-refuse\n  - size-limit\n  - allowlist\n', 'max_connections: 4\nmax_connections_per_source: 4'),
    );
  });
  after(async () => {
    await ingress?.shutdown();
    await el?.close();
  });

  const served = async () =>
    expect((await rpc(ingress.url, 'eth_chainId', [], 9)).text).to.equal('{"jsonrpc":"2.0","id":9,"result":"0x1fcd"}');

  it('F1: refuses a chunked body with 411 before reading it, and closes the connection', async () => {
    const client = await rawClient(ingress.port);
    client.socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\n');
    // One-byte chunks for as long as the socket lives: the server answers, then stops reading
    // (the writes fail and the socket closes) instead of buffering them.
    const timer = setInterval(() => client.socket.writable && client.socket.write('1\r\n \r\n'), 5);
    await client.closed;
    clearInterval(timer);
    const body = jsonRefusal('send the body with a Content-Length header (chunked request bodies are not accepted)');
    expect(client.received()).to.match(/^HTTP\/1\.1 411 Length Required\r\n/);
    expect(client.received()).to.include('content-type: application/json');
    expect(client.received().endsWith(`\r\n\r\n${body}`)).to.equal(true);
    await served();
  });

  it('F1: answers a preflight that declares a body, closing the connection instead of draining it', async () => {
    const client = await rawClient(ingress.port);
    client.socket.write('OPTIONS / HTTP/1.1\r\nhost: x\r\norigin: https://a.example\r\ncontent-length: 100000000\r\n\r\n');
    const timer = setInterval(() => client.socket.writable && client.socket.write('x'.repeat(1024)), 5);
    await client.closed;
    clearInterval(timer);
    expect(client.received()).to.match(/^HTTP\/1\.1 204 /);
    expect(client.received()).to.match(/connection: close/i);
  });

  it('F14: refuses params the EL would read otherwise than the ingress did, reaching nobody', async () => {
    const before = el.received.length;
    const inexact = '"params" holds a number JSON cannot carry exactly (beyond ±2^53, or out of range): send it as a hex string';
    const unicode = '"params" holds a string with a lone UTF-16 surrogate';
    for (const [params, message] of [
      ['[1e400]', inexact],
      ['[18446744073709551617]', inexact],
      ['[{"blockCount": -9007199254740993}]', inexact],
      ['["\\ud800"]', unicode],
      ['{"\\udc00x": 1}', unicode],
    ] as const) {
      const reply = await post(ingress.url, `{"jsonrpc":"2.0","id":4,"method":"eth_chainId","params":${params}}`);
      expect(reply.text, params).to.equal(
        JSON.stringify({ jsonrpc: '2.0', id: 4, error: { code: -32600, message: `invalid request: ${message}` } }),
      );
    }
    expect(el.received.slice(before)).to.deep.equal([]);
    // Exact numbers, fractions and well-formed strings (a surrogate pair included) pass untouched.
    const reply = await post(
      ingress.url,
      '{"jsonrpc":"2.0","id":5,"method":"eth_chainId","params":[9007199254740991, 0.5, "\\ud83d\\ude00"]}',
    );
    expect(reply.text).to.equal('{"jsonrpc":"2.0","id":5,"result":"0x1fcd"}');
    expect(el.received.slice(before).map((call) => call.params)).to.deep.equal([[9007199254740991, 0.5, '\u{1F600}']]);
  });

  it('F9: refuses more than 100 request headers with 431 rather than dropping the last ones unseen', async () => {
    const headers = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-filler-${i}`, 'a']));
    const many = await post(ingress.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', {
      'content-type': 'application/json',
      ...headers(1_000),
      'x-forwarded-for': '203.0.113.7',
    });
    expect(many.status).to.equal(431);
    expect(many.text).to.equal(jsonRefusal('too many request headers (at most 100)'));
    const enough = await post(ingress.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', {
      'content-type': 'application/json',
      ...headers(90),
    });
    expect(enough.text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
  });

  it('F18: answers an unknown Expect with 417 and a JSON body', async () => {
    const client = await rawClient(ingress.port);
    client.socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nexpect: 200-ok\r\ncontent-length: 2\r\n\r\n{}');
    await client.ended;
    expect(client.received()).to.match(/^HTTP\/1\.1 417 Expectation Failed\r\n/);
    expect(client.received().endsWith(`\r\n\r\n${jsonRefusal('only "Expect: 100-continue" is understood')}`)).to.equal(true);
    client.socket.destroy();
  });

  it('F17: sends "100 Continue" only for a body it will read; refuses an oversized one at once', async () => {
    const big = await rawClient(ingress.port);
    big.socket.write(
      'POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: 100000000\r\n\r\n',
    );
    await big.ended;
    expect(big.received()).to.match(/^HTTP\/1\.1 413 /);
    expect(big.received()).to.not.include('100 Continue');
    big.socket.destroy();

    const small = await rawClient(ingress.port);
    const call = '{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}';
    small.socket.write(
      `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: ${call.length}\r\n\r\n`,
    );
    await new Promise<void>((resolve) => small.socket.once('data', () => resolve()));
    expect(small.received()).to.equal('HTTP/1.1 100 Continue\r\n\r\n');
    small.socket.write(call);
    await new Promise<void>((resolve) => {
      const check = () => small.received().includes('{"jsonrpc":"2.0","id":7,"result":"0x1fcd"}') && resolve();
      small.socket.on('data', check);
      check();
    });
    small.socket.destroy();
  });

  it('F2: closes sockets it refused at the HTTP level, so half-open clients cannot hold max_connections', async () => {
    // max_connections is 4: four clients that never close their side.
    const clients = await Promise.all(Array.from({ length: 4 }, () => rawClient(ingress.port)));
    for (const client of clients) client.socket.write('GARBAGE\r\n\r\n');
    await Promise.all(clients.map((client) => client.ended));
    for (const client of clients) {
      expect(client.received()).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(client.received().endsWith(`\r\n\r\n${jsonRefusal('malformed HTTP request')}`)).to.equal(true);
    }
    // The server let go of their sockets: a fifth client is accepted and served.
    await served();
    for (const client of clients) client.socket.destroy();
  });
});

describe('abuse: an EL that answers nothing', () => {
  it('G: turns an HTTP 200 JSON answer with an empty body, declared or chunked, into -32603', async () => {
    let calls = 0;
    // First an empty body with Content-Length 0, then an empty chunked one.
    const el = await startStubEl(
      {},
      { intercept: () => ({ headers: calls++ === 0 ? { 'content-length': '0' } : { 'transfer-encoding': 'chunked' } }) },
    );
    const ingress = await startTestIngress(testConfig(el.url, '\n  - allowlist\n'));
    try {
      const invalid =
        '{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"upstream error: the execution layer answered an invalid response"}}';
      expect((await rpc(ingress.url, 'eth_chainId', [], 3)).text).to.equal(invalid);
      expect((await rpc(ingress.url, 'eth_chainId', [], 3)).text).to.equal(invalid);
      expect(calls).to.equal(2);
    } finally {
      await ingress.shutdown();
      await el.close();
    }
  });
});

describe('abuse: refusals are paid for by the source that causes them', () => {
  let el: StubEl;
  let ingress: TestIngress;

  before(async () => {
    el = await startStubEl({ eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }) });
    const plugins =
      '\n  - batch-refuse\n  - size-limit\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 5, burst: 40}\n';
    ingress = await startTestIngress(testConfig(el.url, plugins));
  });
  after(async () => {
    await ingress?.shutdown();
    await el?.close();
  });

  const postFrom = (from: string, body: string) => postAs(ingress.url, from, body);
  const chainId = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';

  it('F6: charges a large body by its size before parsing it, then refuses the source unparsed; others are served', async () => {
    // 170,000 empty arrays: ~510 KB, ~40 ms to parse. One token per 4 KiB past the first: capped at the burst (40).
    const flood = `[${Array.from({ length: 170_000 }, () => '[]').join(',')}]`;
    const first = await postFrom('127.0.0.1', flood);
    // Parsed once: a batch that large gets the single id-less refusal, not 170,000 of them.
    expect(first).to.deep.equal({
      status: 200,
      text: '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)"}}',
    });
    const second = await postFrom('127.0.0.1', flood);
    expect(second.status).to.equal(429);
    expect(JSON.parse(second.text)).to.deep.include({ id: null });
    expect(JSON.parse(second.text).error).to.include({
      code: -32005,
      message: 'rate limited: too many requests from this source; retry later',
    });
    // The same source's ordinary read is over quota too; another source is served.
    expect((await postFrom('127.0.0.1', chainId)).status).to.equal(429);
    expect(await postFrom('127.0.0.2', chainId)).to.deep.equal({ status: 200, text: '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}' });
  });
});

describe('abuse: a source that does not read its answers', () => {
  let el: ReturnType<typeof createServer>;
  let ingress: TestIngress;
  /** eth_call answers the EL had cut short, each counted once. */
  let aborted = 0;
  let onAborted: () => void = () => {};

  before(async () => {
    aborted = 0;
    // eth_call answers an endless stream of JSON (no socket buffer holds it all, however large
    // the kernel lets it grow); everything else is eth_chainId.
    const chunk = Buffer.alloc(1024 * 1024, '0');
    el = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const call = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string };
        if (call.method !== 'eth_call') {
          return res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x1fcd' }));
        }
        res.on('close', () => {
          aborted++;
          onAborted();
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"jsonrpc":"2.0","id":1,"result":"0x');
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
        };
        res.on('drain', pump);
        pump();
      });
    });
    await new Promise<void>((resolve) => el.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(el.address() as AddressInfo).port}`;
    const plugins =
      '\n  - allowlist\n  - rate-limit:\n      max_in_flight_per_source: 2\n      reads:\n        per_source: {rate_per_second: 1000, burst: 1000}\n';
    const yaml = testConfig(url, plugins, 'client_timeouts:\n  read_stall_ms: 500').replace(
      '  headers_timeout_ms: 2000',
      '  connections: 3\n  headers_timeout_ms: 2000\n  body_timeout_ms: 30000',
    );
    ingress = await startTestIngress(yaml.replace('  body_timeout_ms: 2000\n', ''));
  });
  after(async () => {
    await ingress?.shutdown();
    el?.closeAllConnections();
    await new Promise((resolve) => el?.close(resolve));
  });

  const postFrom = (from: string, body: string) => postAs(ingress.url, from, body);

  it('F3: holds a source to its in-flight cap, cuts answers it stopped reading, and serves everyone else meanwhile', async () => {
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x000000000000000000000000000000000000dead"},"latest"]}';
    const request = `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${call.length}\r\n\r\n${call}`;
    // Two eth_calls whose answers are never read (the sockets are paused, their buffers fill).
    const readers = await Promise.all([rawClient(ingress.port), rawClient(ingress.port)]);
    for (const reader of readers) {
      reader.socket.pause();
      reader.socket.write(request);
    }
    // The third from the same source is refused while those two are open.
    const third = await postFrom('127.0.0.1', call);
    expect(third.status).to.equal(429);
    expect(JSON.parse(third.text).error).to.include({
      code: -32005,
      message: 'rate limited: too many requests in flight from this source; retry later',
    });
    // Another source is served at once on the upstream connection left.
    const started = Date.now();
    expect(await postFrom('127.0.0.2', '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}')).to.deep.equal({
      status: 200,
      text: '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}',
    });
    expect(Date.now() - started).to.be.below(1_000);
    // After read_stall_ms without a byte taken, both answers are cut: their slots come back
    // (polled: the cut is the ingress's own timer, nothing the test could await).
    const deadline = Date.now() + 3_000;
    for (;;) {
      const again = await postFrom('127.0.0.1', '{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[]}');
      if (again.status === 200) break;
      expect(Date.now(), 'slots still held').to.be.below(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(Date.now() - started).to.be.at.least(400);
    // The EL saw both requests aborted, and the readers' connections are closed by the ingress.
    await new Promise<void>((resolve) => {
      onAborted = () => aborted === 2 && resolve();
      onAborted();
    });
    for (const reader of readers) {
      reader.socket.resume();
      await reader.ended;
      reader.socket.destroy();
    }
  });
});

describe('abuse: telling a hidden method from an unknown one', () => {
  it('F13: a bootstrap method on a node that is no anchor is answered as unknown, over quota or not', async () => {
    const el = await startStubEl({ eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }) });
    const plugins =
      '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 1, burst: 1}\n  - local-methods:\n      bootstrap_anchor: false\n';
    const ingress = await startTestIngress(testConfig(el.url, plugins).replace('upstreams:', `upstreams:\n  node: ${el.url}`));
    try {
      const ask = async (method: string) => {
        const reply = await rpc(ingress.url, method, [], 5);
        return { status: reply.status, text: reply.text };
      };
      const unknown = await ask('svc_noSuchMethod');
      expect(unknown.text).to.equal(
        '{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"the method does not exist/is not available"}}',
      );
      expect(await ask('svc_getCheckpointChain')).to.deep.equal(unknown);
      // The source's one token spent: a read is refused 429; the hidden method still answers as unknown.
      await ask('eth_chainId');
      expect((await ask('eth_chainId')).status).to.equal(429);
      expect(await ask('svc_getJournalTail')).to.deep.equal(unknown);
      expect(el.received.map((call) => call.method)).to.deep.equal(['eth_chainId']);
    } finally {
      await ingress.shutdown();
      await el.close();
    }
  });
});
