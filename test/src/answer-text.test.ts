import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { AnswerText } from '../../src/answer-text.js';
import { RpcFailure } from '../../src/errors.js';
import { within } from '../../support/within.js';

const INVALID = { code: -32603, message: 'upstream error: the execution layer answered an invalid response' };
const LIMIT = 64;
const JSON_TYPE = { 'content-type': 'application/json' } as const;

interface Settled {
  readonly err: Error | undefined;
  readonly text: string;
  /** How often settle was called, counted until the pool closed. */
  calls: number;
}

describe('answer-text: one small upstream answer read whole', () => {
  /** How the upstream answers the next request; `chunkSeen` resolves when the handler has taken a chunk. */
  let answerWith: (res: ServerResponse, chunkSeen: () => Promise<void>) => void;
  let server: Server;
  let pool: Pool;
  let upstreamClosed: Promise<boolean>;

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      // Whether the answer was cut (closed before it finished) rather than completed.
      upstreamClosed = once(res, 'close').then(() => !res.writableFinished);
      req.on('end', () => answerWith(res, nextChunk));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
  });
  after(async () => {
    server.closeAllConnections();
    await pool.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  let chunkWaiter: (() => void) | undefined;
  const nextChunk = () => new Promise<void>((resolve) => (chunkWaiter = resolve));

  /** Dispatches one POST through the pool into an AnswerText; resolves with its first settlement. */
  function read(limitBytes = LIMIT, highestStatus: 200 | 429 = 200): Promise<Settled> {
    return within(
      5_000,
      'AnswerText settled',
      new Promise<Settled>((resolve) => {
        let settled: Settled | undefined;
        const handler = new AnswerText(limitBytes, highestStatus, (err, text) => {
          if (settled !== undefined) return void settled.calls++;
          settled = { err, text, calls: 1 };
          resolve(settled);
        });
        // Passed through as is; only tells the upstream when a chunk has been taken.
        const watched: Dispatcher.DispatchHandler = {
          onConnect: (abort) => handler.onConnect(abort),
          onHeaders: (status) => handler.onHeaders(status),
          onData: (chunk) => {
            const reading = handler.onData(chunk);
            chunkWaiter?.();
            return reading;
          },
          onComplete: () => handler.onComplete(),
          onError: (err) => handler.onError(err),
        };
        pool.dispatch({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, watched);
      }),
    );
  }
  const json = (status: number, body: string) => (res: ServerResponse) =>
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  const expectInvalid = (settled: Settled) => {
    expect(settled.err).to.be.instanceOf(RpcFailure);
    expect((settled.err as RpcFailure).rpc).to.deep.equal(INVALID);
    expect(settled.text).to.equal('');
  };

  it('reads a 200 answer as text', async () => {
    answerWith = json(200, '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
    expect(await read()).to.deep.equal({ err: undefined, text: '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}', calls: 1 });
  });

  it('joins an answer that arrives in several chunks, a UTF-8 character split between two', async () => {
    const text = '{"result":"caf\u00e9"}';
    const bytes = Buffer.from(text);
    const split = bytes.indexOf(0xc3) + 1;
    answerWith = async (res, chunkSeen) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
      const seen = chunkSeen();
      res.write(bytes.subarray(0, split));
      await seen;
      res.end(bytes.subarray(split));
    };
    expect(await read()).to.deep.equal({ err: undefined, text, calls: 1 });
  });

  it('reads an empty 200 answer as empty text (for the caller to refuse as not JSON)', async () => {
    answerWith = json(200, '');
    expect(await read()).to.deep.equal({ err: undefined, text: '', calls: 1 });
  });

  it(`takes an answer of exactly the limit (${LIMIT} bytes)`, async () => {
    const body = `"${'x'.repeat(LIMIT - 2)}"`;
    answerWith = json(200, body);
    expect(await read()).to.deep.equal({ err: undefined, text: body, calls: 1 });
  });

  it('refuses an answer as soon as it is one byte over the limit, cutting the rest', async () => {
    answerWith = (res) => res.writeHead(200, { ...JSON_TYPE, 'content-length': LIMIT + 100 }).write('x'.repeat(LIMIT + 1));
    expectInvalid(await read());
    expect(await within(5_000, 'upstream response closed', upstreamClosed)).to.equal(true);
  });

  it('counts the limit over all chunks, not per chunk', async () => {
    answerWith = async (res, chunkSeen) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const seen = chunkSeen();
      res.write('x'.repeat(LIMIT - 10));
      await seen;
      res.end('y'.repeat(11));
    };
    expectInvalid(await read());
  });

  it('refuses any final status but 200: 201, 204, 429, 500, 502', async () => {
    for (const status of [201, 204, 429, 500, 502]) {
      answerWith = status === 204 ? (res) => res.writeHead(204).end() : json(status, '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
      const settled = await read();
      expectInvalid(settled);
    }
  });

  it('reads a 429 as an answer when the upstream is another ingress (its -32005), and still refuses a 500', async () => {
    const limited = '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limited"}}';
    answerWith = json(429, limited);
    expect(await read(1024, 429)).to.deep.equal({ err: undefined, text: limited, calls: 1 });
    answerWith = json(500, limited);
    expectInvalid(await read(1024, 429));
  });

  it('skips an interim 1xx response (103 Early Hints) and reads the final answer', async () => {
    answerWith = (res) => {
      res.writeEarlyHints({ link: '</x>; rel=preload' });
      json(200, '{"result":"0x2"}')(res);
    };
    expect(await read()).to.deep.equal({ err: undefined, text: '{"result":"0x2"}', calls: 1 });
  });

  it('passes a transport failure on as undici reported it, with no text', async () => {
    answerWith = (res) => {
      res.writeHead(200, { ...JSON_TYPE, 'content-length': 40 }).write('{"result":');
      res.destroy();
    };
    const settled = await read();
    expect(settled.err).not.to.be.instanceOf(RpcFailure);
    expect((settled.err as Error & { code?: string }).code).to.equal('UND_ERR_SOCKET');
    expect(settled.text).to.equal('');
  });

  it('settles once: a late error after the end is not reported', () => {
    const calls: Array<[Error | undefined, string]> = [];
    const handler = new AnswerText(LIMIT, 200, (err, text) => calls.push([err, text]));
    handler.onComplete();
    handler.onError(new Error('late'));
    expect(calls).to.deep.equal([[undefined, '']]);
  });
});
