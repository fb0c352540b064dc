import { expect } from 'chai';
import { EventEmitter, once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, request, type Dispatcher } from 'undici';
import { AnswerStream } from '../../src/answer-stream.js';
import { RpcFailure } from '../../src/errors.js';
import { within } from '../../support/within.js';

const INVALID = { code: -32603, message: 'upstream error: the execution layer answered an invalid response' };
const STALL_MS = 300;
const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** What `done` was called with, and whether the client's response had been started by then. */
type Outcome = { readonly err: (Error & { code?: string }) | undefined; readonly declaredBytes: number; readonly headersSent: boolean };

/** Writes `total` bytes as fast as the reader takes them, stopping if the answer is cut; then `finish`. */
function pour(res: ServerResponse, total: number, finish: () => void = () => res.end()): void {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  const more = (): void => {
    while (sent < total && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    if (sent >= total) finish();
  };
  more();
}

/** A client call whose body is read only when asked (unread, it stops undici reading the socket). */
const call = (url: string, signal?: AbortSignal) =>
  request(url, { method: 'POST', headers: JSON_TYPE, body: '{}', ...(signal ? { signal } : {}) });

/** The response's headers without those Node adds to every response. */
const ownHeaders = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)));

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

/** Reads a body to its end: undefined, or the error that cut it. */
const failureOf = (body: AsyncIterable<Buffer>) =>
  (async () => {
    for await (const _ of body);
  })().then(
    () => undefined,
    (err: Error) => err,
  );

describe("answer-stream: an upstream answer written into the client's response", () => {
  /** How the EL answers the next request. */
  let answerWith: (res: ServerResponse) => void;
  let elRequests = 0;
  /** Resolves true if the EL's latest answer was cut before it finished. */
  let elCut: Promise<boolean>;
  /** How the front handles the next request. */
  let mode: { stallMs?: number; cancelOnClose?: boolean; destroyFirst?: boolean; cutOnError?: boolean; outliveClient?: boolean } = {};
  let report: ((outcome: Outcome) => void) | undefined;
  /** After the handler's calls: 'start' (headersSent) for the final head, 'data', 'paused' (the client's response needs a drain); 'closed'. */
  const probe = new EventEmitter();
  let el: Server, front: Server, pool: Pool, url: string;

  const nextOutcome = () => within(10_000, 'AnswerStream done', new Promise<Outcome>((resolve) => (report = resolve)));

  before(async () => {
    el = createServer((req, res) => {
      elRequests++;
      elCut = once(res, 'close').then(() => !res.writableFinished);
      req.resume();
      req.on('end', () => answerWith(res));
    });
    // The caller's part, as the server plays it: cancel on close, answer a refusal itself, cut a started answer.
    front = createServer((req, res) => {
      req.resume();
      const { stallMs, cancelOnClose = true, destroyFirst = false, cutOnError = true, outliveClient = false } = mode;
      const stream = new AnswerStream(
        res,
        (err, declaredBytes) => {
          report?.({ err, declaredBytes, headersSent: res.headersSent });
          if (err === undefined) return;
          if (res.headersSent || res.destroyed) return void (cutOnError && res.destroy());
          res.writeHead(502, { 'content-type': 'text/plain', 'content-length': 7 }).end('refused');
        },
        stallMs,
        (ms) => probe.emit('elTime', ms),
        outliveClient,
      );
      res.on('close', () => {
        probe.emit('closed');
        if (cancelOnClose && !res.writableFinished) stream.cancel();
      });
      if (destroyFirst) res.destroy();
      const watched: Dispatcher.DispatchHandler = {
        onConnect: (abort) => stream.onConnect(abort),
        onHeaders: (status, headers, resume) => {
          const reading = stream.onHeaders(status, headers, resume);
          if (status >= 200) probe.emit('start', res.headersSent);
          return reading;
        },
        onData: (chunk) => {
          const reading = stream.onData(chunk);
          probe.emit('data');
          if (res.writableNeedDrain) probe.emit('paused');
          return reading;
        },
        onComplete: () => stream.onComplete(),
        onError: (err) => stream.onError(err),
      };
      pool.dispatch(
        { path: '/', method: 'POST', headers: JSON_TYPE, body: '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{}]}' },
        watched,
      );
    });
    // One connection: an upstream request left unreleased would block every later test.
    pool = new Pool(await listen(el), { connections: 1 });
    url = await listen(front);
  });
  beforeEach(() => {
    mode = {};
    probe.removeAllListeners();
  });
  after(async () => {
    for (const server of [front, el]) server.closeAllConnections();
    await pool.destroy();
    await Promise.all([front, el].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  });

  describe('an answer', () => {
    const ANSWER = '{"jsonrpc":"2.0","id":1,"result":["0x1","0x2"]}';

    const passed: ReadonlyArray<readonly [string, (res: ServerResponse) => void, Record<string, string>, number]> = [
      [
        "with its Content-Length, as plain application/json, none of the EL's other headers, declaring its length",
        (res) =>
          res
            .writeHead(200, {
              'content-type': 'application/json; charset=utf-8',
              'content-length': ANSWER.length,
              server: 'el/1.0',
              'x-el': 'y',
            })
            .end(ANSWER),
        { 'content-type': 'application/json', 'content-length': String(ANSWER.length) },
        ANSWER.length,
      ],
      [
        'with its header names in capitals (the names are matched without case)',
        (res) => res.writeHead(200, ['Content-Type', 'application/json', 'CONTENT-LENGTH', String(ANSWER.length)]).end(ANSWER),
        { 'content-type': 'application/json', 'content-length': String(ANSWER.length) },
        ANSWER.length,
      ],
      [
        'chunked as chunked, declaring 0 bytes',
        (res) => void res.writeHead(200, JSON_TYPE).write(ANSWER.slice(0, 10), () => res.end(ANSWER.slice(10))),
        { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        0,
      ],
      [
        'after an interim 103, which it skips',
        (res) =>
          res.writeEarlyHints({ link: '</x>; rel=preload' }, () =>
            res.writeHead(200, { ...JSON_TYPE, 'content-length': ANSWER.length }).end(ANSWER),
          ),
        { 'content-type': 'application/json', 'content-length': String(ANSWER.length) },
        ANSWER.length,
      ],
    ];
    for (const [label, answer, headers, declaredBytes] of passed) {
      it(`passes a 200 JSON answer on ${label}`, async () => {
        answerWith = answer;
        const outcome = nextOutcome();
        const reply = await call(url);
        expect([reply.statusCode, ownHeaders(reply.headers), await reply.body.text()]).to.deep.equal([200, headers, ANSWER]);
        expect(await outcome).to.deep.equal({ err: undefined, declaredBytes, headersSent: true });
      });
    }
  });

  describe('what is no answer: refused before a byte reaches the client, so the caller can answer instead', () => {
    const BODY = '{"jsonrpc":"2.0","id":1,"result":"0x1"}';
    const cases: ReadonlyArray<readonly [string, (res: ServerResponse) => void]> = [
      ['HTTP 502 with an HTML page', (res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>502 Bad Gateway</html>')],
      ['HTTP 500 with JSON', (res) => res.writeHead(500, JSON_TYPE).end(BODY)],
      ['HTTP 429 with JSON', (res) => res.writeHead(429, JSON_TYPE).end(BODY)],
      ['HTTP 200 as text/plain', (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(BODY)],
      ['HTTP 200 without a content type', (res) => res.writeHead(200, { 'content-length': BODY.length }).end(BODY)],
      [
        'HTTP 200 with two content types, JSON and HTML',
        (res) => res.writeHead(200, ['Content-Type', 'application/json', 'content-type', 'text/html']).end(BODY),
      ],
      ['HTTP 200 JSON with Content-Length: 0', (res) => res.writeHead(200, { ...JSON_TYPE, 'content-length': 0 }).end()],
      ['HTTP 200 JSON, chunked, ending without a byte', (res) => res.writeHead(200, JSON_TYPE).end()],
    ];
    for (const [label, answer] of cases) {
      it(label, async () => {
        answerWith = answer;
        const outcome = nextOutcome();
        const reply = await call(url);
        expect([reply.statusCode, await reply.body.text()]).to.deep.equal([502, 'refused']);
        const { err, declaredBytes, headersSent } = await outcome;
        expect(err).to.be.instanceOf(RpcFailure);
        expect([(err as RpcFailure).rpc, declaredBytes, headersSent]).to.deep.equal([INVALID, 0, false]);
      });
    }

    it('writes the head only with the first byte: an EL failing after its head leaves the response unstarted', async () => {
      answerWith = (res) => {
        probe.once('start', () => res.destroy());
        res.writeHead(200, { ...JSON_TYPE, 'content-length': 40 }).flushHeaders();
      };
      const started = once(probe, 'start');
      const outcome = nextOutcome();
      const reply = await call(url);
      expect(await started).to.deep.equal([false]);
      expect([reply.statusCode, await reply.body.text()]).to.deep.equal([502, 'refused']);
      expect(await outcome).to.deep.include({ declaredBytes: 0, headersSent: false });
      expect((await outcome).err?.code).to.equal('UND_ERR_SOCKET');
    });

    it('reports an EL failing mid-body as undici did, with 0 bytes, and the caller cuts the client (truncated, never wrong)', async () => {
      answerWith = (res) => {
        probe.once('data', () => res.destroy());
        res.writeHead(200, { ...JSON_TYPE, 'content-length': 40 }).write('{"jsonrpc":');
      };
      const outcome = nextOutcome();
      const reply = await call(url);
      expect(reply.statusCode).to.equal(200);
      expect(await failureOf(reply.body)).to.be.instanceOf(Error);
      const { err, declaredBytes, headersSent } = await outcome;
      expect([err?.code, declaredBytes, headersSent]).to.deep.equal(['UND_ERR_SOCKET', 0, true]);
    });
  });

  describe('a client that goes away', () => {
    const HEAD = '{"jsonrpc":"2.0","id":1,"result":[';
    let held: ServerResponse | undefined;
    const holdAfterHead = (res: ServerResponse) => {
      held = res;
      res.writeHead(200, JSON_TYPE).write(HEAD);
    };
    /** The next call through the one pooled connection is answered: nothing held it. */
    const poolIsFree = async () => {
      answerWith = (res) => res.writeHead(200, { ...JSON_TYPE, 'content-length': 2 }).end('{}');
      const reply = await within(5_000, 'a call on the freed connection', call(url));
      expect(await reply.body.text()).to.equal('{}');
    };

    async function leaveAfterHead(): Promise<void> {
      const abort = new AbortController();
      const reply = await call(url, abort.signal);
      reply.body.on('error', () => {});
      const first = (await reply.body[Symbol.asyncIterator]().next()) as IteratorResult<Buffer>;
      expect(String(first.value)).to.equal(HEAD);
      abort.abort();
    }

    for (const cancelOnClose of [true, false]) {
      const how = cancelOnClose
        ? 'cancel() aborts the upstream request'
        : 'not cancelled, the next chunk finds the response closed and aborts';
      it(`mid-answer: ${how}, freeing its connection`, async () => {
        mode = { cancelOnClose };
        answerWith = holdAfterHead;
        const outcome = nextOutcome();
        const closed = once(probe, 'closed');
        await leaveAfterHead();
        await within(5_000, "the client's response closed", closed);
        if (!held!.destroyed) held!.write('"0x1",');
        const { err, declaredBytes } = await outcome;
        expect([err?.code, declaredBytes]).to.deep.equal(['UND_ERR_ABORTED', 0]);
        expect(await within(5_000, "the EL's answer cut", elCut)).to.equal(true);
        await poolIsFree();
      });
    }

    it('outliving the client (a gas-heavy call): gone before the EL answers, the request is not aborted; done and the EL time come with the answer', async () => {
      mode = { outliveClient: true };
      let answerNow = () => {};
      const arrived = new Promise<void>((resolve) => {
        answerWith = (res) => {
          answerNow = () => res.writeHead(200, { ...JSON_TYPE, 'content-length': 2 }).end('{}');
          resolve();
        };
      });
      const abort = new AbortController();
      const failed = call(url, abort.signal).then(
        () => undefined,
        (err: Error) => err,
      );
      await within(5_000, 'the EL has the request', arrived);
      const arrivedAt = performance.now();
      const closed = once(probe, 'closed');
      abort.abort();
      await within(5_000, "the client's response closed", closed);
      expect(await failed).to.be.instanceOf(Error);
      const outcome = nextOutcome();
      const elTime = once(probe, 'elTime');
      // The EL computes on: it answers 200 ms after the client left.
      await new Promise((resolve) => setTimeout(resolve, 200));
      answerNow();
      const [ms] = (await within(5_000, 'the EL time', elTime)) as [number];
      expect(ms).to.be.at.least(performance.now() - arrivedAt - 50);
      expect(ms).to.be.at.least(200);
      expect((await outcome).err?.code).to.equal('UND_ERR_ABORTED');
      expect(await within(5_000, "the EL's answer", elCut)).to.equal(false);
      await poolIsFree();
    });

    it('before the request started: it never reaches the EL', async () => {
      mode = { destroyFirst: true };
      const before = elRequests;
      const outcome = nextOutcome();
      const failed = call(url).then(
        () => undefined,
        (err: Error) => err,
      );
      expect((await outcome).err?.code).to.equal('UND_ERR_ABORTED');
      expect(await failed).to.be.instanceOf(Error);
      mode = {};
      await poolIsFree();
      expect(elRequests).to.equal(before + 1);
    });

    it(`by reading nothing for ${STALL_MS} ms: cut, and the upstream request aborted`, async () => {
      // The caller neither cancels nor cuts: both are the stall timer's own doing.
      mode = { stallMs: STALL_MS, cancelOnClose: false, cutOnError: false };
      answerWith = (res) => pour(res.writeHead(200, JSON_TYPE), 1024 ** 3);
      const paused = once(probe, 'paused');
      const outcome = nextOutcome();
      const reply = await call(url);
      await within(10_000, "the client's response waiting for a drain", paused);
      const pausedAt = performance.now();
      const { err, declaredBytes, headersSent } = await outcome;
      expect(performance.now() - pausedAt).to.be.within(STALL_MS - 2, STALL_MS + 3_000);
      expect([err?.code, declaredBytes, headersSent]).to.deep.equal(['UND_ERR_ABORTED', 0, true]);
      expect(await within(5_000, "the EL's answer cut", elCut)).to.equal(true);
      expect(await within(10_000, "the client's body cut", failureOf(reply.body))).to.be.instanceOf(Error);
      await poolIsFree();
    });
  });

  it('reports once: a late error after the end is not reported', () => {
    const calls: unknown[][] = [];
    const stream = new AnswerStream(undefined as unknown as ServerResponse, (...args) => calls.push(args));
    stream.onError(new Error('first'));
    stream.onError(new Error('late'));
    expect(calls.map(([err, declaredBytes]) => [(err as Error).message, declaredBytes])).to.deep.equal([['first', 0]]);
  });

  it(`does not cut a client that drained in time when the EL then idles past ${STALL_MS} ms`, async () => {
    mode = { stallMs: STALL_MS };
    // More than the socket buffers between the EL and the client hold, so that the client's response fills.
    const SIZE = 64 * 1024 * 1024;
    answerWith = (res) => {
      res.writeHead(200, { ...JSON_TYPE, 'content-length': SIZE + 2 });
      // The last two bytes only after twice the stall time: a timer left armed by the pause would fire meanwhile.
      pour(res, SIZE, () => setTimeout(() => res.end('{}'), 2 * STALL_MS));
    };
    const paused = once(probe, 'paused');
    const outcome = nextOutcome();
    const reply = await call(url);
    await within(10_000, "the client's response waiting for a drain", paused);
    const bytes = Buffer.from(await within(20_000, 'the whole answer', reply.body.arrayBuffer()));
    expect([bytes.length, bytes.subarray(-3).toString()]).to.deep.equal([SIZE + 2, 'a{}']);
    expect(await outcome).to.deep.equal({ err: undefined, declaredBytes: SIZE + 2, headersSent: true });
  });
});
