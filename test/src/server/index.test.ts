import { expect } from 'chai';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { request, WebSocket } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { post, postFresh, rpc } from '../../../support/http.js';
import { heldAnswer, startStubEl } from '../../../support/stub-el.js';
import { within } from '../../../support/within.js';
import { startTestIngress, testConfig } from '../../helpers/ingress.js';
import { useTappedIngress } from '../../helpers/tap.js';
import { until } from '../../helpers/until.js';

const BATCH_MESSAGE =
  'batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)';
const invalid = (id: unknown, why: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: `invalid request: ${why}` } });

describe('server: one JSON-RPC request per HTTP POST', () => {
  const suite = useTappedIngress();

  describe('wire envelope', () => {
    it('answers malformed JSON with -32700 and id null, HTTP 200', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"2.0","id":1,');
      expect(reply.status).to.equal(200);
      expect(reply.text).to.equal(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the body is not valid JSON"}}',
      );
    });

    it('answers a body that is not UTF-8 with -32700', async () => {
      const reply = await post(suite.ingress.url, Buffer.from([0x7b, 0xff, 0x7d]));
      expect(JSON.parse(reply.text).error.code).to.equal(-32700);
    });

    it('refuses a request without "jsonrpc": "2.0" with -32600, echoing its id', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"1.0","id":7,"method":"eth_chainId"}');
      expect(reply.text).to.equal(invalid(7, '"jsonrpc" must be "2.0"'));
    });

    it('refuses a notification (no id) instead of executing it silently', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"2.0","method":"eth_chainId","params":[]}');
      expect(reply.text).to.equal(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: notifications (requests without an id) are not supported; add an id"}}',
      );
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('refuses a case-variant member that geth would read as the method', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","METHOD":"debug_traceBlockByNumber"}');
      expect(reply.text).to.equal(invalid(1, 'unexpected member "METHOD"'));
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('forwards only the members it inspected when a key is duplicated', async () => {
      const body = '{"jsonrpc":"2.0","id":1,"method":"debug_traceBlockByNumber","method":"eth_chainId","params":[]}';
      const reply = await post(suite.ingress.url, body);
      expect(reply.text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
      expect(suite.tap.bodies).to.deep.equal(['{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}']);
    });

    it('forwards the canonical JSON of what it read: ids and params with escapes, nesting, no params', async () => {
      const sent = [
        {
          jsonrpc: '2.0',
          id: 'q"uo\\te\u2028\u00e9',
          method: 'eth_getBalance',
          params: ['0x0000000000000000000000000000000000000001', 'latest'],
        },
        { jsonrpc: '2.0', id: null, method: 'eth_chainId' },
        {
          jsonrpc: '2.0',
          id: -9007199254740991,
          method: 'eth_call',
          params: [{ to: '0x0000000000000000000000000000000000000001', data: '0x' }, { blockNumber: '0x0' }],
        },
        { jsonrpc: '2.0', id: 3, method: 'eth_blockNumber', params: { named: ['a\n', { deeper: [] }] } },
      ];
      // Members in another order and spaced out: the EL still gets the one canonical form.
      for (const { jsonrpc, id, method, params } of sent) {
        const members = [`"method" : ${JSON.stringify(method)}`, `"id": ${JSON.stringify(id)}`, `"jsonrpc":"${jsonrpc}"`];
        if (params !== undefined) members.unshift(`"params":${JSON.stringify(params, null, 1)}`);
        await post(suite.ingress.url, `{ ${members.join(' , ')} }`);
      }
      expect(suite.tap.bodies).to.deep.equal(sent.map((request) => JSON.stringify(request)));
    });

    for (const [label, id] of [
      ['a string id', 'abc-\u00e9'],
      ['zero', 0],
      ['a negative id', -42],
      ['the largest safe integer', Number.MAX_SAFE_INTEGER],
      ['a null id', null],
    ] as const) {
      it(`echoes ${label} exactly`, async () => {
        const reply = await rpc(suite.ingress.url, 'eth_chainId', [], id);
        expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }));
      });
    }

    for (const [label, raw] of [
      ['an object id', '{"a":1}'],
      ['an array id', '[1]'],
      ['an id beyond 2^53 (it could not be echoed exactly)', '123456789012345678901234567890'],
      ['a boolean id', 'true'],
    ]) {
      it(`refuses ${label} with -32600 and id null`, async () => {
        const reply = await post(suite.ingress.url, `{"jsonrpc":"2.0","id":${raw},"method":"eth_chainId"}`);
        expect(reply.text).to.equal(invalid(null, '"id" must be a string, an integer within ±2^53 or null'));
      });
    }

    it('refuses params that are neither array nor object', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":"x"}');
      expect(reply.text).to.equal(invalid(2, '"params" must be an array or an object'));
    });

    it('refuses method names that are not plain identifiers', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"2.0","id":3,"method":"eth_chainId\\u0000"}');
      expect(reply.text).to.equal(invalid(3, '"method" is not a valid method name'));
    });

    it('refuses deeply nested params without crashing', async () => {
      const deep = '['.repeat(5000) + ']'.repeat(5000);
      const reply = await post(suite.ingress.url, `{"jsonrpc":"2.0","id":4,"method":"eth_call","params":${deep}}`);
      expect(reply.text).to.equal(invalid(4, '"params" is nested deeper than 64 levels'));
      expect(suite.tap.bodies).to.deep.equal([]);
    });
  });

  describe('batch-refuse', () => {
    it("answers each element of a batch with -32600 carrying that element's id, without reaching the EL", async () => {
      const reply = await post(
        suite.ingress.url,
        '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":"b","method":"eth_blockNumber"},42]',
      );
      expect(reply.status).to.equal(200);
      const error = { code: -32600, message: BATCH_MESSAGE };
      expect(reply.text).to.equal(
        JSON.stringify([
          { jsonrpc: '2.0', id: 1, error },
          { jsonrpc: '2.0', id: 'b', error },
          { jsonrpc: '2.0', id: null, error },
        ]),
      );
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('answers an empty batch with one error object', async () => {
      const reply = await post(suite.ingress.url, '[]');
      expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: BATCH_MESSAGE } }));
    });
  });

  describe('transport', () => {
    it('answers GET with 405 and an Allow header', async () => {
      const reply = await request(suite.ingress.url, { method: 'GET' });
      expect(reply.statusCode).to.equal(405);
      expect(reply.headers.allow).to.equal('POST, OPTIONS');
      await reply.body.dump();
    });

    it('takes a WebSocket handshake on the same listener (test/src/websocket.test.ts), forwarding nothing for it', async () => {
      const socket = new WebSocket(suite.ingress.url.replace('http:', 'ws:'));
      await once(socket, 'open');
      socket.close();
      await once(socket, 'close');
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('answers a non-JSON content type with 415', async () => {
      const reply = await post(suite.ingress.url, '{}', { 'content-type': 'text/plain' });
      expect(reply.status).to.equal(415);
    });

    it('accepts application/json with a charset parameter', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', {
        'content-type': 'application/json; charset=utf-8',
      });
      expect(reply.text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
    });

    it('answers a compressed body with 415', async () => {
      const reply = await post(suite.ingress.url, 'x', { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      expect(reply.status).to.equal(415);
      expect(JSON.parse(reply.text).error.message).to.equal('compressed request bodies are not supported');
    });

    it('answers 413 stating the cap to a body declared over it, and 411 to a streamed (chunked) one, reading neither', async () => {
      const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: ['x'.repeat(600 * 1024)] });
      const tooLarge = await post(suite.ingress.url, big);
      expect(tooLarge.status).to.equal(413);
      expect(tooLarge.text).to.equal(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request body too large (at most 524288 bytes)"}}',
      );
      const chunked = await request(suite.ingress.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Readable.from([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}')]),
      });
      expect(chunked.statusCode).to.equal(411);
      expect(await chunked.body.text()).to.equal(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"send the body with a Content-Length header (chunked request bodies are not accepted)"}}',
      );
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('accepts a body carrying a 128 KiB transaction as hex', async () => {
      const raw = `0x${'00'.repeat(128 * 1024)}`;
      const reply = await rpc(suite.ingress.url, 'eth_sendRawTransaction', [raw]);
      expect(reply.status).to.equal(200);
      expect(JSON.parse(reply.text).error?.message).to.not.equal('oversized transaction');
    });
  });

  describe('CORS', () => {
    it('answers a preflight with 204 and the allowed method and headers', async () => {
      const reply = await request(suite.ingress.url, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://dapp.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(reply.statusCode).to.equal(204);
      expect(reply.headers['access-control-allow-origin']).to.equal('*');
      expect(reply.headers['access-control-allow-methods']).to.equal('POST, OPTIONS');
      expect(reply.headers['access-control-allow-headers']).to.equal('content-type');
      await reply.body.dump();
    });

    it('marks answers, proxied ones included, as readable by any origin by default', async () => {
      const reply = await post(suite.ingress.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', {
        'content-type': 'application/json',
        origin: 'https://dapp.example',
      });
      expect(reply.headers['access-control-allow-origin']).to.equal('*');
    });

    it('allows only the configured origins when a list is given', async () => {
      const listed = await startTestIngress(testConfig(suite.anvil.url, undefined, 'cors:\n  allowed_origins: ["https://good.example"]'));
      try {
        const good = await post(listed.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', {
          'content-type': 'application/json',
          origin: 'https://good.example',
        });
        expect(good.headers['access-control-allow-origin']).to.equal('https://good.example');
        const bad = await post(listed.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', {
          'content-type': 'application/json',
          origin: 'https://evil.example',
        });
        expect(bad.headers['access-control-allow-origin']).to.equal(undefined);
      } finally {
        await listed.shutdown();
      }
    });
  });
});

describe('server: connection cap', () => {
  it('closes connections beyond max_connections on accept, and keeps serving those within it', async () => {
    const ingress = await startTestIngress(
      testConfig('http://127.0.0.1:1', undefined, 'max_connections: 2\nmax_connections_per_source: 2'),
    );
    const sockets: Socket[] = [];
    try {
      const open = async () => {
        const socket = connect(ingress.port, '127.0.0.1');
        sockets.push(socket);
        await once(socket, 'connect');
        return socket;
      };
      const first = await open();
      await open();
      const third = await open();
      // The server closes the third without a word.
      const [hadError] = await Promise.race([once(third, 'close'), once(third, 'data').then(() => ['data'])]);
      expect(hadError).to.not.equal('data');
      first.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]');
      const [reply] = (await once(first, 'data')) as [Buffer];
      expect(reply.toString()).to.match(/^HTTP\/1\.1 200 OK/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await ingress.shutdown();
    }
  });
});

describe('server: a body is charged before it is read', () => {
  let ingress: Awaited<ReturnType<typeof startTestIngress>>;
  before(async () => {
    // No size-limit: bodies up to 1 MiB; the budget at its floor, 1 MiB.
    const plugins = '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 1, burst: 130}\n';
    ingress = await startTestIngress(
      testConfig('http://127.0.0.1:1', plugins, 'max_body_bytes_in_flight: 1048576\nmetrics_listen: 127.0.0.1:0'),
    );
  });
  after(() => ingress.shutdown());

  /** The gauge on /metrics: declared body bytes being received. */
  const bodyBytesInFlight = async () =>
    Number(/^svc_ingress_body_bytes_in_flight (\d+)$/m.exec(await (await request(`${ingress.metricsUrl}/metrics`)).body.text())?.[1]);

  /** Sends headers declaring `length` bytes and `Expect: 100-continue` from `from`; resolves with the first bytes answered. */
  async function declare(
    from: string,
    length: number,
  ): Promise<{ socket: Socket; first: string; text: () => string; ended: Promise<unknown> }> {
    const socket = connect({ port: ingress.port, host: '127.0.0.1', localAddress: from });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => {});
    const ended = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: ${length}\r\n\r\n`,
    );
    await once(socket, 'data');
    return { socket, first: text, text: () => text, ended };
  }

  it('refuses a body the budget cannot take with 503 and Retry-After, unread, until the bytes held are given back', async () => {
    const holder = await declare('127.0.0.51', 700_000);
    expect(holder.first).to.equal('HTTP/1.1 100 Continue\r\n\r\n');
    expect(await bodyBytesInFlight()).to.equal(700_000);
    const refused = await declare('127.0.0.52', 400_000);
    await refused.ended;
    expect(refused.text()).to.match(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(refused.text()).to.match(/\r\nretry-after: 1\r\n/i);
    expect(refused.text()).to.match(/\r\nconnection: close\r\n/i);
    expect(refused.text()).to.not.include('100 Continue');
    expect(
      refused
        .text()
        .endsWith(
          '\r\n\r\n{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the endpoint is receiving too many request bodies; retry later"}}',
        ),
    ).to.equal(true);
    // The holder's body, read and parsed (not JSON: -32700), gives its 700,000 bytes back.
    holder.socket.write(Buffer.alloc(700_000, 0x20));
    while (!holder.text().includes('"code":-32700')) await once(holder.socket, 'data');
    const after = await declare('127.0.0.53', 400_000);
    expect(after.first).to.equal('HTTP/1.1 100 Continue\r\n\r\n');
    expect(await bodyBytesInFlight()).to.equal(400_000);
    for (const client of [holder, after]) client.socket.destroy();
  });

  it("takes rate-limit's body tokens from the declared length: over quota, 429 before a byte is read, no 100 Continue", async () => {
    // 700,000 bytes cost the whole burst of 130 read tokens.
    const first = await declare('127.0.0.54', 700_000);
    expect(first.first).to.equal('HTTP/1.1 100 Continue\r\n\r\n');
    first.socket.destroy();
    const second = await declare('127.0.0.54', 700_000);
    await second.ended;
    expect(second.text()).to.match(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(second.text()).to.match(/\r\nretry-after: \d+\r\n/i);
    expect(second.text()).to.match(/\r\nconnection: close\r\n/i);
    expect(second.text()).to.not.include('100 Continue');
    expect(second.text()).to.match(
      /\r\n\r\n\{"jsonrpc":"2\.0","id":null,"error":\{"code":-32005,"message":"rate limited: too many requests from this source; retry later","data":\{"retry_after_ms":\d+\}\}\}$/,
    );
  });
});

describe('server: a body that stops arriving, and bodies through a trusted proxy', () => {
  let ingress: Awaited<ReturnType<typeof startTestIngress>>;
  before(async () => {
    // Bodies up to 300,000 bytes; a source's share an eighth of 4 MiB, 512 KiB.
    const plugins =
      "\n  - size-limit:\n      max_raw_transaction_bytes: 65536\n      max_body_bytes: 300000\n  - allowlist\n  - rate-limit:\n      trusted_proxies: ['127.0.0.70']\n";
    ingress = await startTestIngress(
      testConfig(
        'http://127.0.0.1:1',
        plugins,
        'max_body_bytes_in_flight: 4194304\nmetrics_listen: 127.0.0.1:0\nclient_timeouts:\n  body_idle_ms: 300',
      ),
    );
  });
  after(() => ingress.shutdown());

  const bodyBytesInFlight = async () =>
    Number(/^svc_ingress_body_bytes_in_flight (\d+)$/m.exec(await (await request(`${ingress.metricsUrl}/metrics`)).body.text())?.[1]);

  /** Headers declaring `length` bytes from `from`, and `firstBytes` of the body; what comes back, and when the connection closed. */
  function declare(from: string, length: number, headers = '', firstBytes = 0) {
    const socket = connect({ port: ingress.port, host: '127.0.0.1', localAddress: from });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => {});
    const ended = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
    socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${headers}content-length: ${length}\r\n\r\n`);
    if (firstBytes > 0) socket.write(Buffer.alloc(firstBytes, 0x20));
    return { socket, text: () => text, ended };
  }

  it('cuts a body that brings no byte for body_idle_ms with 408, giving its bytes back to the budget', async () => {
    const started = performance.now();
    const stalled = declare('127.0.0.71', 200_000, '', 1_000);
    while ((await bodyBytesInFlight()) !== 200_000) await new Promise((resolve) => setTimeout(resolve, 10));
    const closedAt = await stalled.ended;
    expect(closedAt - started).to.be.within(250, 5_000);
    expect(stalled.text()).to.match(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(stalled.text()).to.match(/\r\nconnection: close\r\n/i);
    expect(
      stalled.text().endsWith('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the request body stopped arriving"}}'),
    ).to.equal(true);
    expect(await bodyBytesInFlight()).to.equal(0);
  });

  it('keeps a body that goes on arriving, however slowly, within the idle time', async () => {
    const slow = declare('127.0.0.72', 80_000);
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      slow.socket.write(Buffer.alloc(20_000, 0x20));
    }
    while (!slow.text().includes('"code":-32700')) await once(slow.socket, 'data');
    // 80,000 spaces are not JSON: read whole (600 ms, every gap within 300) and answered -32700, not cut.
    expect(slow.text()).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    slow.socket.destroy();
  });

  it("counts a trusted proxy's bodies per forwarded client: one client's share does not refuse another's", async () => {
    // A second 300 KB body of one client is past its 512 KiB share; another client's is not.
    const first = declare('127.0.0.70', 300_000, 'x-forwarded-for: 203.0.113.1\r\n');
    while ((await bodyBytesInFlight()) !== 300_000) await new Promise((resolve) => setTimeout(resolve, 10));
    const same = declare('127.0.0.70', 300_000, 'x-forwarded-for: 203.0.113.1\r\n');
    await same.ended;
    expect(same.text()).to.match(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(same.text()).to.include('too many request bodies are being received from this source');
    const other = declare('127.0.0.70', 300_000, 'x-forwarded-for: 203.0.113.2\r\n');
    while ((await bodyBytesInFlight()) !== 600_000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(other.text()).to.equal('');
    for (const client of [first, other]) client.socket.destroy();
  });
});

describe('server: connections per source', () => {
  it("closes a source's connection past max_connections_per_source on accept, serving other sources and itself again once one closes", async () => {
    const ingress = await startTestIngress(
      testConfig('http://127.0.0.1:1', undefined, 'max_connections: 8\nmax_connections_per_source: 2'),
    );
    const sockets: Socket[] = [];
    const open = async (from: string) => {
      const socket = connect({ port: ingress.port, host: '127.0.0.1', localAddress: from });
      sockets.push(socket);
      socket.on('error', () => {});
      await once(socket, 'connect');
      return socket;
    };
    /** A call on `socket`: true when answered, false when the server closed it instead. */
    const served = async (socket: Socket) => {
      socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]');
      const [reply] = (await Promise.race([once(socket, 'data'), once(socket, 'close').then(() => [undefined])])) as [Buffer | undefined];
      return reply?.toString().startsWith('HTTP/1.1 200 OK') ?? false;
    };
    try {
      const first = await open('127.0.0.61');
      await open('127.0.0.61');
      const third = await open('127.0.0.61');
      const [outcome] = await Promise.race([once(third, 'close'), once(third, 'data').then(() => ['data'])]);
      expect(outcome).to.not.equal('data');
      expect(await served(await open('127.0.0.62'))).to.equal(true);
      first.destroy();
      await once(first, 'close');
      // The server sees the close a moment later: the source's next connection is served once it has.
      let again = false;
      for (let i = 0; i < 50 && !again; i++) again = await served(await open('127.0.0.61'));
      expect(again).to.equal(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await ingress.shutdown();
    }
  });
});

describe('server: pipelined requests', () => {
  it('settles every request pipelined behind an unanswered one when the client leaves: nothing stays in flight, the drain ends', async () => {
    const held = heldAnswer('0x1fcd');
    const el = await startStubEl({ eth_chainId: held.answer });
    const ingress = await startTestIngress(testConfig(el.url, '\n  - allowlist\n', 'metrics_listen: 127.0.0.1:0'));
    const inFlight = async () =>
      Number(/^svc_ingress_requests_in_flight (\d+)$/m.exec(await (await request(`${ingress.metricsUrl}/metrics`)).body.text())?.[1]);
    try {
      const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
      const socket = connect(ingress.port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      socket.write(
        `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`.repeat(20),
      );
      await within(2_000, 'the EL receives the first call', held.arrived);
      await until(inFlight, (count) => count === 20, 'all twenty in flight');
      socket.destroy();
      held.release();
      await until(inFlight, (count) => count === 0, 'every request settled');
    } finally {
      held.release();
      await within(5_000, 'the drain', ingress.shutdown());
      await el.close();
    }
  });
});

describe('server: a source refused past its allowance', () => {
  it('is not read from until the hold ends, and a drain answers the request it left waiting instead of cutting it', async () => {
    const el = await startStubEl({ eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }) });
    const ingress = await startTestIngress(
      testConfig(el.url, '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 1, burst: 1}\n'),
    );
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    const call = `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const socket = connect(ingress.port, '127.0.0.1');
    socket.on('error', () => {});
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const statuses = () => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map(([, status]) => status);
    const answered = async (count: number) => {
      while (statuses().length < count) await once(socket, 'data');
    };
    try {
      // One passes; the next 64 are refused within the allowance (at least 64 at once), the 65th past it.
      for (let i = 1; i <= 66; i++) {
        socket.write(call);
        await answered(i);
      }
      expect(statuses()).to.deep.equal(['200', ...Array(65).fill('429')]);
      // Held now: this one waits unread; the drain reads and answers it rather than closing the connection under it.
      socket.write(call);
      const closed = once(socket, 'close');
      await within(5_000, 'the drain', ingress.shutdown());
      await closed;
      expect(statuses()).to.have.length(67);
      // Its own answer: refused again, or served if its token came meanwhile.
      expect(statuses()[66]).to.be.oneOf(['429', '200']);
    } finally {
      socket.destroy();
      await ingress.shutdown();
      await el.close();
    }
  });
});

describe('server: deep pipelining', () => {
  it('answers a request and the 32 pipelined behind it, then refuses the rest in order and closes the connection', async () => {
    const el = await startStubEl({ eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }) });
    const ingress = await startTestIngress(testConfig(el.url, '\n  - allowlist\n'));
    try {
      const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
      const socket = connect(ingress.port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      const closed = once(socket, 'close');
      socket.write(
        `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`.repeat(40),
      );
      await within(5_000, 'the server closes the connection', closed);
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map(([, status]) => status);
      // The first answered in full, the 32 waiting behind it too; the next refused, and the connection ends there.
      expect(statuses.slice(0, 33)).to.deep.equal(Array(33).fill('200'));
      expect(statuses.length).to.be.above(33);
      expect(new Set(statuses.slice(33))).to.deep.equal(new Set(['429']));
      expect(text).to.include(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too many requests pipelined on this connection (at most 32 waiting): read the answers before sending more"}}',
      );
    } finally {
      await ingress.shutdown();
      await el.close();
    }
  });
});

describe('server: slow clients', () => {
  let ingress: Awaited<ReturnType<typeof startTestIngress>>;
  before(async () => {
    ingress = await startTestIngress(
      testConfig('http://127.0.0.1:1', undefined, 'client_timeouts:\n  headers_ms: 500\n  request_ms: 1000\n  keep_alive_ms: 500'),
    );
  });
  after(() => ingress.shutdown());

  /** Sends `first`, then drips one byte every 100 ms; resolves with what the server answered and when it closed. */
  async function drip(first: string): Promise<{ answer: string; closedAfterMs: number }> {
    const socket = connect(ingress.port, '127.0.0.1');
    await once(socket, 'connect');
    const started = Date.now();
    socket.write(first);
    const timer = setInterval(() => socket.writable && socket.write('a'), 100);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('error', () => {});
    await once(socket, 'close');
    clearInterval(timer);
    return { answer, closedAfterMs: Date.now() - started };
  }

  it('answers 408 and closes a client that drips its headers (slowloris)', async () => {
    const { answer, closedAfterMs } = await drip('POST / HTTP/1.1\r\nhost: x\r\nx-slow: ');
    expect(answer).to.match(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).to.be.within(400, 2_500);
  });

  it('answers 408 and closes a client that drips its body', async () => {
    const { answer, closedAfterMs } = await drip(
      'POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{',
    );
    expect(answer).to.match(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).to.be.within(900, 3_000);
  });

  it('answers 431 to headers over 16 KiB and closes the connection', async () => {
    const socket = connect(ingress.port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write(`POST / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await once(socket, 'close');
    expect(answer).to.match(/^HTTP\/1\.1 431/);
  });

  it('closes an idle keep-alive connection', async () => {
    const socket = connect(ingress.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n[]');
    await once(socket, 'data');
    const started = Date.now();
    await once(socket, 'close');
    expect(Date.now() - started).to.be.within(300, 2_500);
  });
});

describe('server: gas-heavy reads on EL connections of their own', () => {
  it('streams eth_call and its kin on upstreams.heavy_connections, one after another, while other reads pass beside them', async () => {
    const held = heldAnswer('0x');
    const el = await startStubEl({
      eth_call: held.answer,
      eth_estimateGas: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x5208' }),
      eth_getBalance: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' }),
    });
    const ingress = await startTestIngress(
      testConfig(el.url, '\n  - allowlist').replace('  headers_timeout_ms: 2000', '  headers_timeout_ms: 2000\n  heavy_connections: 1'),
    );
    try {
      const call = rpc(ingress.url, 'eth_call', [{ to: '0x000000000000000000000000000000000000dEaD' }, 'latest'], 1);
      await within(2_000, 'the EL receives the eth_call', held.arrived);
      // The one heavy connection is held: the estimate waits in the ingress, the balance does not.
      const estimate = rpc(ingress.url, 'eth_estimateGas', [{ to: '0x000000000000000000000000000000000000dEaD' }], 2);
      const balance = await rpc(ingress.url, 'eth_getBalance', ['0x000000000000000000000000000000000000dEaD', 'latest'], 3);
      expect(balance.text).to.equal('{"jsonrpc":"2.0","id":3,"result":"0x1"}');
      // Time for the estimate to reach the EL, were it not waiting for the heavy connection.
      await sleep(50);
      expect(el.received.map((r) => r.method)).to.deep.equal(['eth_call', 'eth_getBalance']);
      held.release();
      expect((await call).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x"}');
      expect((await estimate).text).to.equal('{"jsonrpc":"2.0","id":2,"result":"0x5208"}');
      expect(el.received.map((r) => r.method)).to.deep.equal(['eth_call', 'eth_getBalance', 'eth_estimateGas']);
    } finally {
      held.release();
      await ingress.shutdown();
      await el.close();
    }
  });

  it("refuses, unsent, a call its source's last two show would take longer than max_call_ms: 429 -32005 with Retry-After; less gas, and other sources, run", async () => {
    const CALL_MS = 300;
    const el = await startStubEl({
      eth_call: async (id) => {
        await sleep(CALL_MS);
        return JSON.stringify({ jsonrpc: '2.0', id, result: '0x' });
      },
      eth_getBalance: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' }),
    });
    const ingress = await startTestIngress(
      testConfig(el.url, '\n  - allowlist').replace(
        '  headers_timeout_ms: 2000',
        '  headers_timeout_ms: 2000\n  heavy_connections: 1\n  max_call_ms: 200',
      ),
    );
    const dead = '0x000000000000000000000000000000000000dEaD';
    const calls = () => el.received.filter(({ method }) => method === 'eth_call').length;
    const body = (id: number, gas?: string) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_call', params: [{ to: dead, ...(gas === undefined ? {} : { gas }) }, 'latest'] });
    try {
      // Two gasless calls of 300 ms; a read answered at once while each runs shows the EL was not holding them.
      for (const id of [1, 2]) {
        const answered = post(ingress.url, body(id));
        await until(
          async () => calls(),
          (n) => n === id,
          'the EL has the call',
        );
        await sleep(100);
        expect((await rpc(ingress.url, 'eth_getBalance', [dead, 'latest'], 10 + id)).text).to.equal(
          `{"jsonrpc":"2.0","id":${10 + id},"result":"0x1"}`,
        );
        expect((await answered).text).to.equal(`{"jsonrpc":"2.0","id":${id},"result":"0x"}`);
      }
      const refused = await post(ingress.url, body(3));
      expect(refused.status).to.equal(429);
      const { error } = JSON.parse(refused.text) as { error: { data: { retry_after_ms: number; expected_ms: number } } };
      // 300 ms or a little more, of 200: due back once the cost faded to two thirds (it halves each minute).
      expect(error.data.expected_ms).to.be.within(CALL_MS, 2 * CALL_MS);
      expect(error.data.retry_after_ms).to.be.within(
        60_000 * Math.log2((error.data.expected_ms - 1) / 200),
        60_000 * Math.log2(error.data.expected_ms / 200) + 1,
      );
      expect(refused.text).to.equal(
        `{"jsonrpc":"2.0","id":3,"error":{"code":-32005,"message":"rate limited: calls this large from this source lately kept the execution layer longer than one call may; ask for less gas or retry later","data":{"retry_after_ms":${error.data.retry_after_ms},"expected_ms":${error.data.expected_ms},"max_ms":200}}}`,
      );
      expect(refused.headers['retry-after']).to.equal(String(Math.ceil(error.data.retry_after_ms / 1000)));
      expect(calls()).to.equal(2);
      // A call naming 1,000,000 gas is expected to take a fiftieth; another source's call has no cost learned.
      expect((await post(ingress.url, body(4, '0xf4240'))).text).to.equal('{"jsonrpc":"2.0","id":4,"result":"0x"}');
      expect(await postFresh(ingress.url, body(5), '127.0.0.2')).to.deep.equal({
        status: 200,
        json: { jsonrpc: '2.0', id: 5, result: '0x' },
      });
      expect(calls()).to.equal(4);
    } finally {
      await ingress.shutdown();
      await el.close();
    }
  });
});
