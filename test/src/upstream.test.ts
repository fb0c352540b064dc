import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { request } from 'undici';
import { startAnvil, type Anvil } from '../../devnet/anvil.js';
import { Upstream } from '../../src/upstream.js';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { post, rpc } from '../../support/http.js';
import { LOG_COUNT, memoryOf, mineLogBomb } from '../../support/log-bomb.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { within } from '../../support/within.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const UNAVAILABLE = (id: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: 'upstream unavailable: the execution layer did not answer' },
  });
const INVALID = (id: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: 'upstream error: the execution layer answered an invalid response' },
  });
const CHAIN_ID_ANSWER = '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}';
/** testConfig() sets both upstream timeouts to this. */
const TEST_TIMEOUT_MS = 2000;

/** testConfig() with its upstream options replaced, failing loudly if testConfig()'s layout changes. */
function withUpstreamOptions(yaml: string, options: string): string {
  const lines = `  headers_timeout_ms: ${TEST_TIMEOUT_MS}\n  body_timeout_ms: ${TEST_TIMEOUT_MS}\n`;
  expect(yaml, 'testConfig() layout').to.include(lines);
  return yaml.replace(lines, `${options.replace(/^/gm, '  ')}\n`);
}

function listenLocal(server: Server | ReturnType<typeof createTcpServer>): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

interface FullReply {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly bytes: Buffer;
}

async function readAll(url: string, body: string): Promise<FullReply> {
  const reply = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: reply.statusCode, headers: reply.headers, bytes: Buffer.from(await reply.body.arrayBuffer()) };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

describe('upstream: streaming answers from the EL', () => {
  describe('a multi-megabyte eth_getLogs against anvil', () => {
    const anvil = useAnvil();
    let ingress: TestIngress;
    let body: string;
    let direct: Buffer;

    before(async function () {
      this.timeout(60_000);
      const block = await mineLogBomb(anvil.current.url);
      const params = [{ fromBlock: block, toBlock: block }];
      body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params });
      const reply = await readAll(anvil.current.url, body);
      expect(reply.status).to.equal(200);
      expect(reply.headers['content-length']).to.equal(String(reply.bytes.length));
      direct = reply.bytes;
      expect((JSON.parse(direct.toString()) as { result: unknown[] }).result).to.have.length(LOG_COUNT);
      ingress = await startTestIngress(testConfig(anvil.current.url));
    });
    after(async () => {
      await ingress?.shutdown();
    });

    it('streams it to the client byte for byte as anvil answered it', async () => {
      const reply = await readAll(ingress.url, body);
      console.log(`      eth_getLogs over one block: ${LOG_COUNT} logs, ${direct.length} bytes (${mib(direct.length)})`);
      expect(reply.status).to.equal(200);
      expect(reply.headers['content-type']).to.equal('application/json');
      expect(reply.headers['content-length'], "the EL's Content-Length, passed on").to.equal(String(direct.length));
      expect(reply.bytes.length).to.equal(direct.length);
      expect(reply.bytes.equals(direct), "ingress answer is byte-identical to anvil's").to.equal(true);
    });

    describe('as the svc-ingress process', () => {
      const CONCURRENT = 16;
      let child: IngressProcess | undefined;

      after(async () => {
        if (child && child.child.exitCode === null) child.child.kill('SIGKILL');
        await child?.exited;
      });

      it(`streams ${CONCURRENT} concurrent answers to slow and fast readers without buffering them`, async function () {
        this.timeout(120_000);
        // anvil serialises 16 such answers before it sends the last one's headers: with the rest
        // of the suite running, that can take longer than testConfig()'s 2 s.
        const yaml = withUpstreamOptions(testConfig(anvil.current.url), 'headers_timeout_ms: 60000\nbody_timeout_ms: 60000');
        child = await startIngressProcess(yaml.replace('log_level: debug', 'log_level: info'));
        const pid = child.child.pid!;
        expect((await rpc(child.url, 'eth_chainId')).text).to.equal(CHAIN_ID_ANSWER);
        const before = memoryOf(pid);

        // All answers are open at once before anyone reads: a buffering ingress would hold all of
        // them now (the kernel's socket buffers take only a few MiB of each). Then half the clients
        // drain as fast as they can and half take ~2 ms per chunk, slower than anvil sends.
        const replies = await Promise.all(
          Array.from({ length: CONCURRENT }, () =>
            request(child!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
          ),
        );
        const held = memoryOf(pid);
        const results = await Promise.all(
          replies.map(async (reply, i) => {
            expect(reply.statusCode).to.equal(200);
            const hash = createHash('sha256');
            let size = 0;
            for await (const chunk of reply.body as AsyncIterable<Buffer>) {
              hash.update(chunk);
              size += chunk.length;
              if (i % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
            }
            return { size, hash: hash.digest('hex') };
          }),
        );
        const after = memoryOf(pid);

        const expected = { size: direct.length, hash: sha256(direct) };
        for (const result of results) expect(result).to.deep.equal(expected);
        const growthBytes = (after.hwmKiB - before.hwmKiB) * 1024;
        const bufferedBytes = CONCURRENT * direct.length;
        console.log(
          `      svc-ingress RSS: baseline ${mib(before.rssKiB * 1024)} (peak ${mib(before.hwmKiB * 1024)}), ` +
            `with all ${CONCURRENT} answers open ${mib(held.rssKiB * 1024)}, peak ${mib(after.hwmKiB * 1024)}, ` +
            `growth ${mib(growthBytes)}; ` +
            `${CONCURRENT} answers × ${mib(direct.length)} = ${mib(bufferedBytes)} if buffered`,
        );
        expect(growthBytes, 'peak RSS growth under load').to.be.below(bufferedBytes / 4);

        child.child.kill('SIGTERM');
        expect(await within(15_000, 'svc-ingress exit after SIGTERM', child.exited)).to.equal(0);
      });
    });
  });

  describe('an EL that answers in pieces', () => {
    /**
     * A slow-drip upstream over real HTTP: it sends the head of a JSON-RPC answer at once and
     * the rest only when the test says so. It tests the ingress's transport, not EL semantics.
     */
    const HEAD = (id: unknown) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":[`;
    const TAIL = '"0x1","0x2","0x3"]}';

    interface Held {
      readonly res: ServerResponse;
      /** Resolves when the upstream's response is closed, finished or not. */
      readonly closed: Promise<void>;
    }
    let drip: Server;
    let nextHeld: ((held: Held) => void) | undefined;
    let ingress: TestIngress;

    const nextRequest = () => within(5_000, 'request at the drip upstream', new Promise<Held>((resolve) => (nextHeld = resolve)));

    before(async () => {
      drip = createServer((req: IncomingMessage, res: ServerResponse) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const { id, method } = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string };
          // eth_blockNumber: not even the headers yet.
          if (method !== 'eth_blockNumber') {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.write(HEAD(id));
          }
          nextHeld?.({ res, closed: once(res, 'close').then(() => undefined) });
        });
      });
      const url = await listenLocal(drip);
      // One pooled connection, so a request the ingress failed to release would block the next;
      // long timeouts, so only the client's disconnect (not a timeout) can release it in time.
      const options = 'headers_timeout_ms: 20000\nbody_timeout_ms: 20000\nconnections: 1';
      ingress = await startTestIngress(withUpstreamOptions(testConfig(url), options));
    });
    after(async () => {
      // Held answers first: the ingress's shutdown waits for its upstream requests.
      drip.closeAllConnections();
      await ingress?.shutdown();
      await new Promise<void>((resolve) => drip.close(() => resolve()));
    });

    it('passes the first bytes on before the EL has finished, then the rest intact', async () => {
      const arrived = nextRequest();
      const reply = await request(ingress.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{}]}',
      });
      expect(reply.statusCode).to.equal(200);
      const upstream = await arrived;
      const chunks = reply.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      let received = '';
      while (received.length < HEAD(1).length) {
        const { value, done } = await within(5_000, 'first bytes through the ingress', chunks.next());
        if (done) throw new Error(`body ended early: ${received}`);
        received += value.toString();
      }
      expect(received).to.equal(HEAD(1));
      expect(upstream.res.writableEnded, 'the upstream has not finished its answer').to.equal(false);

      upstream.res.end(TAIL);
      for (;;) {
        const { value, done } = await within(5_000, 'rest of the body', chunks.next());
        if (done) break;
        received += value.toString();
      }
      expect(received).to.equal(`${HEAD(1)}${TAIL}`);
      expect(JSON.parse(received)).to.deep.equal({ jsonrpc: '2.0', id: 1, result: ['0x1', '0x2', '0x3'] });
    });

    it('aborts the upstream request when the client disconnects mid-answer, freeing its connection', async () => {
      const arrived = nextRequest();
      // Raw TCP, so "disconnects" means exactly one thing: the socket is destroyed.
      const socket: Socket = connect(ingress.port, '127.0.0.1');
      socket.write(rawPost('{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{}]}'));
      let seen = '';
      await within(
        5_000,
        'first bytes of the answer at the client',
        new Promise<void>((resolve) => {
          socket.on('data', (chunk: Buffer) => {
            seen += chunk.toString();
            if (seen.includes(HEAD(2))) resolve();
          });
        }),
      );
      const upstream = await arrived;
      expect(upstream.res.writableEnded).to.equal(false);

      socket.destroy();
      await within(5_000, 'upstream response closed after the client went away', upstream.closed);
      expect(upstream.res.writableFinished, 'cut, not finished').to.equal(false);

      // The single pooled connection is free again: the next request gets through at once.
      const next = nextRequest();
      const pending = rpc(ingress.url, 'eth_getLogs', [{}], 3);
      (await next).res.end(TAIL);
      expect((await pending).text).to.equal(`${HEAD(3)}${TAIL}`);
    });

    it("cuts the client's connection when the EL fails mid-answer (a truncated body, never a wrong one)", async () => {
      const arrived = nextRequest();
      const reply = await request(ingress.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":4,"method":"eth_getLogs","params":[{}]}',
      });
      expect(reply.statusCode).to.equal(200);
      (await arrived).res.destroy();
      let received = '';
      const failure = await within(
        5_000,
        'client body error',
        (async () => {
          try {
            for await (const chunk of reply.body as AsyncIterable<Buffer>) received += chunk.toString();
          } catch (err) {
            return err as Error;
          }
          return undefined;
        })(),
      );
      expect(failure, `body ended normally with ${JSON.stringify(received)}`).to.be.instanceOf(Error);
      expect(HEAD(4).startsWith(received)).to.equal(true);
    });

    // Until the EL's headers arrive undici has no response to watch: the ingress must abort the
    // request itself, or a hang-up holds a pooled connection until headers_timeout_ms (20 s
    // here). Kept last in this block: a regression would leave the pool busy.
    it('aborts the upstream request when the client disconnects before the EL has answered', async () => {
      const arrived = nextRequest();
      const socket: Socket = connect(ingress.port, '127.0.0.1');
      // eth_blockNumber: the drip sends not even the headers.
      socket.write(rawPost('{"jsonrpc":"2.0","id":5,"method":"eth_blockNumber","params":[]}'));
      const upstream = await arrived;
      expect(upstream.res.headersSent).to.equal(false);

      socket.destroy();
      await within(5_000, 'upstream request closed after the client went away', upstream.closed);

      const next = nextRequest();
      const pending = rpc(ingress.url, 'eth_getLogs', [{}], 6);
      (await next).res.end(TAIL);
      expect((await pending).text).to.equal(`${HEAD(6)}${TAIL}`);
    });
  });

  describe('the EL going away and coming back', () => {
    let anvil: Anvil;
    let port: number;
    let ingress: TestIngress;

    before(async () => {
      anvil = await startAnvil();
      port = anvil.port;
      ingress = await startTestIngress(testConfig(anvil.url));
      expect((await rpc(ingress.url, 'eth_chainId')).text).to.equal(CHAIN_ID_ANSWER);
    });
    after(async () => {
      await ingress?.shutdown();
      await anvil?.stop();
    });

    it('answers -32603 "upstream unavailable" with HTTP 200 while anvil is down, and recovers when it is back', async () => {
      await anvil.stop();
      for (const id of [41, 'again']) {
        const reply = await rpc(ingress.url, 'eth_blockNumber', [], id);
        expect(reply.status).to.equal(200);
        expect(reply.text).to.equal(UNAVAILABLE(id));
      }
      // Still running: what it answers itself is unaffected.
      const refusal = {
        code: -32600,
        message:
          'batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)',
      };
      expect((await post(ingress.url, '[]')).text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: null, error: refusal }));

      anvil = await startAnvil({ port });
      expect((await rpc(ingress.url, 'eth_chainId')).text).to.equal(CHAIN_ID_ANSWER);
    });

    it('answers -32603 at once when anvil dies holding the request, and recovers when it is back', async () => {
      // A stopped anvil cannot answer: the request provably reaches it (its bytes wait unread in
      // anvil's socket) and is still in flight when anvil is killed.
      anvil.child.kill('SIGSTOP');
      try {
        const pending = rpc(ingress.url, 'eth_chainId', [], 42);
        await waitFor(5_000, 'request bytes queued at the stopped anvil', () => unreadBytesAt(port) > 0);
        const killedAt = Date.now();
        anvil.child.kill('SIGKILL');
        const reply = await within(TEST_TIMEOUT_MS * 3, 'answer after anvil was killed', pending);
        const elapsedMs = Date.now() - killedAt;
        expect(reply.status).to.equal(200);
        expect(reply.text).to.equal(UNAVAILABLE(42));
        expect(elapsedMs, 'answered on the reset, not on the headers timeout').to.be.below(TEST_TIMEOUT_MS / 2);
      } finally {
        // A stopped process takes no SIGTERM: whatever failed above, anvil goes.
        anvil.child.kill('SIGKILL');
        await anvil.stop();
      }

      anvil = await startAnvil({ port });
      expect((await rpc(ingress.url, 'eth_chainId')).text).to.equal(CHAIN_ID_ANSWER);
    });
  });

  // A plugin may take its time (a shared rate-limit store, the gate); a client that leaves
  // meanwhile closes the response before the answer is streamed into it. A closed response
  // never drains, and waiting for it would hold the pooled connection for good.
  describe('an answer streamed into a response the client has already closed', () => {
    const anvil = useAnvil();

    it('gives the connection back at once: the next call on a one-connection pool is answered', async () => {
      const upstream = new Upstream({ url: anvil.current.url, connections: 1, headersTimeoutMs: 20_000, bodyTimeoutMs: 20_000 });
      let streamed!: (err: unknown) => void;
      const ended = new Promise<unknown>((resolve) => (streamed = resolve));
      const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
        res.on('close', () => upstream.stream('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', res, streamed));
      });
      try {
        const url = await listenLocal(server);
        const socket: Socket = connect(Number(new URL(url).port), '127.0.0.1');
        socket.write(rawPost('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'));
        await once(server, 'request');
        socket.destroy();
        // Ended with the abort, not with an answer written into nowhere.
        expect(await within(5_000, 'the stream into the closed response ended', ended)).to.be.an('error');
        expect(await within(5_000, 'the next call on the same pool', upstream.call('eth_chainId', []))).to.deep.equal({ result: '0x1fcd' });
      } finally {
        server.closeAllConnections();
        server.close();
        await upstream.close();
      }
    });
  });

  describe('an EL that accepts and never answers', () => {
    let hung: ReturnType<typeof createTcpServer>;
    const sockets = new Set<Socket>();
    let accepted: ((socket: Socket) => void) | undefined;
    let ingress: TestIngress;

    before(async () => {
      hung = createTcpServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.resume();
        accepted?.(socket);
      });
      ingress = await startTestIngress(testConfig(await listenLocal(hung)));
    });
    after(async () => {
      await ingress?.shutdown();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
    });

    it(`answers -32603 "upstream unavailable" within headers_timeout_ms (${TEST_TIMEOUT_MS} ms), then lets go`, async () => {
      const connection = new Promise<Socket>((resolve) => (accepted = resolve));
      const started = Date.now();
      const reply = await within(TEST_TIMEOUT_MS + 2_000, 'answer from the ingress', rpc(ingress.url, 'eth_chainId', [], 6));
      const elapsedMs = Date.now() - started;
      expect(reply.status).to.equal(200);
      expect(reply.text).to.equal(UNAVAILABLE(6));
      expect(elapsedMs).to.be.within(TEST_TIMEOUT_MS - 100, TEST_TIMEOUT_MS + 1_500);
      const socket = await connection;
      if (!socket.destroyed) await within(2_000, 'ingress closing the hung connection', once(socket, 'close'));
    });
  });

  describe('an EL answering HTTP 502 with an HTML page', () => {
    const HTML = '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n';
    let proxy: StubEl;
    let ingress: TestIngress;

    before(async () => {
      proxy = await startStubEl(
        {},
        { intercept: () => ({ status: 502, headers: { 'content-type': 'text/html', server: 'nginx' }, body: HTML }) },
      );
      ingress = await startTestIngress(testConfig(proxy.url));
    });
    after(async () => {
      await ingress?.shutdown();
      await proxy?.close();
    });

    it('answers -32603 "upstream error" with HTTP 200 and passes no HTML on', async () => {
      for (const id of [7, 8]) {
        const reply = await rpc(ingress.url, 'eth_blockNumber', [], id);
        expect(reply.status).to.equal(200);
        expect(reply.headers['content-type']).to.equal('application/json');
        expect(reply.text).to.equal(INVALID(id));
        expect(reply.text).not.to.include('<');
      }
    });
  });
});

/** One HTTP/1.1 JSON POST as raw bytes, for a client whose socket the test controls. */
function rawPost(payload: string): string {
  const head = ['POST / HTTP/1.1', 'host: 127.0.0.1', 'content-type: application/json'];
  return `${[...head, `content-length: ${Buffer.byteLength(payload)}`].join('\r\n')}\r\n\r\n${payload}`;
}

/** Bytes received but not yet read by the process listening on 127.0.0.1:`port` (/proc/net/tcp). */
function unreadBytesAt(port: number): number {
  let total = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, , state, queues] = line.trim().split(/\s+/);
    // State 01 is ESTABLISHED: a listening socket's rx_queue counts pending connections instead.
    if (state !== '01' || local === undefined || queues === undefined) continue;
    if (parseInt(local.split(':')[1]!, 16) === port) total += parseInt(queues.split(':')[1]!, 16);
  }
  return total;
}

/** Polls `condition` every 10 ms, for a state no event announces (a kernel socket queue). */
async function waitFor(timeoutMs: number, what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('upstream: a keep-alive connection the EL closed under a call', () => {
  /** An EL that answers the first request of each connection, and closes the connection on the second, unanswered. */
  let server: Server;
  let url: string;
  let connections = 0;
  before(async () => {
    server = createServer((req, res) => {
      const socket = req.socket as Socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      if (socket.served > 1) {
        socket.destroy();
        return;
      }
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":"0x2a"}'));
    });
    server.on('connection', () => connections++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const upstream = (retryClosedConnection: boolean) =>
    new Upstream({ url, connections: 1, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000, retryClosedConnection });

  it('a state read is sent again, once, on a new connection: the caller gets the answer', async () => {
    const reads = upstream(true);
    const before = connections;
    expect(await reads.call('eth_blockNumber', [])).to.deep.equal({ result: '0x2a' });
    expect(await reads.call('eth_blockNumber', [])).to.deep.equal({ result: '0x2a' });
    expect(connections - before).to.equal(2);
    await reads.close();
  });

  it('anything else is not sent twice: the call fails as the EL being unavailable', async () => {
    const submissions = upstream(false);
    expect(await submissions.call('eth_blockNumber', [])).to.deep.equal({ result: '0x2a' });
    const failed = await submissions.call('eth_blockNumber', []).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    expect(failed).to.equal('upstream unavailable: the execution layer did not answer');
    await submissions.close();
  });
});
