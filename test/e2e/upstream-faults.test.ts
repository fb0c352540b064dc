/**
 * A recording fake EL switched between failure modes, behind the real ingress: each mode gets
 * its documented answer, the ingress survives every one, and a healthy EL is served again after.
 */
import { expect } from 'chai';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rpc } from '../helpers/http.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

type Mode = 'healthy' | 'hang' | 'drip' | 'reset' | 'garbage-html' | 'garbage-json' | 'server-error' | 'wrong-type' | 'empty' | 'oversized';

const UNAVAILABLE = { code: -32603, message: 'upstream unavailable: the execution layer did not answer' };
const INVALID = { code: -32603, message: 'upstream error: the execution layer answered an invalid response' };

describe('upstream faults: one recording fake EL, many modes', () => {
  let mode: Mode = 'healthy';
  const received: string[] = [];
  const el = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(body);
      const id = (JSON.parse(body) as { id: unknown }).id;
      switch (mode) {
        case 'healthy':
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }));
        case 'hang':
          return; // accepts, reads, never answers
        case 'drip': {
          // A valid answer, one byte every 20 ms.
          const answer = JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(answer.length) });
          let i = 0;
          const timer = setInterval(() => {
            if (res.destroyed) return clearInterval(timer);
            res.write(answer[i++]!);
            if (i === answer.length) {
              clearInterval(timer);
              res.end();
            }
          }, 20);
          return;
        }
        case 'reset':
          return req.socket.destroy();
        case 'garbage-html':
          return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops</html>');
        case 'garbage-json':
          return res.writeHead(200, { 'content-type': 'application/json' }).end('}{not json');
        case 'server-error':
          return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal"}');
        case 'wrong-type':
          return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('\x00\x01');
        case 'empty':
          return res.writeHead(200, { 'content-type': 'application/json' }).end();
        case 'oversized':
          // Valid JSON-RPC, but past the 4 MiB the ingress reads of an answer it parses itself.
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: 'a'.repeat(5 * 1024 * 1024) }));
      }
    });
  });
  let ingress: TestIngress;

  before(async () => {
    await new Promise<void>((resolve) => el.listen(0, '127.0.0.1', resolve));
    ingress = await startTestIngress(testConfig(`http://127.0.0.1:${(el.address() as AddressInfo).port}`));
  });
  after(async () => {
    await ingress.shutdown();
    el.closeAllConnections();
    await new Promise((resolve) => el.close(resolve));
  });
  afterEach(async () => {
    // Whatever the mode did, a healthy EL is served again by the same ingress.
    mode = 'healthy';
    expect(JSON.parse((await rpc(ingress.url, 'eth_chainId', [], 9)).text)).to.deep.equal({ jsonrpc: '2.0', id: 9, result: '0x1fcd' });
  });

  it('answers -32603 within headers_timeout_ms (2 s) when the EL hangs', async () => {
    mode = 'hang';
    const started = Date.now();
    const { body } = await read();
    expect(JSON.parse(body).error).to.deep.equal(UNAVAILABLE);
    expect(Date.now() - started).to.be.within(1_800, 4_000);
  });

  it('streams a dripping answer through intact', async () => {
    mode = 'drip';
    expect((await read()).body).to.equal('{"jsonrpc":"2.0","id":5,"result":"0x1fcd"}');
  });

  it('answers -32603 while the EL is restarting, and serves it again once it listens', async () => {
    const port = (el.address() as AddressInfo).port;
    el.closeAllConnections();
    await new Promise((resolve) => el.close(resolve));
    expect(JSON.parse((await read()).body).error).to.deep.equal(UNAVAILABLE);
    await new Promise<void>((resolve) => el.listen(port, '127.0.0.1', resolve));
  });

  const read = async (method = 'eth_chainId') => {
    const reply = await rpc(ingress.url, method, [], 5);
    return { status: reply.status, body: reply.text };
  };

  for (const [m, expected] of [
    ['reset', UNAVAILABLE],
    ['garbage-html', INVALID],
    ['server-error', INVALID],
    ['wrong-type', INVALID],
  ] as const) {
    it(`answers a streamed read with ${expected.code} "${expected.message.split(':')[0]}" when the EL ${m === 'reset' ? 'resets the connection' : `answers ${m}`}`, async () => {
      mode = m;
      const { status, body } = await read();
      expect(status).to.equal(200);
      expect(JSON.parse(body)).to.deep.equal({ jsonrpc: '2.0', id: 5, error: expected });
    });
  }

  it('passes a JSON-typed answer through unparsed, even when it is not JSON (streams are not re-parsed)', async () => {
    mode = 'garbage-json';
    expect((await read()).body).to.equal('}{not json');
  });

  for (const [m, expected] of [
    ['garbage-json', INVALID],
    ['empty', INVALID],
    ['server-error', INVALID],
    ['oversized', INVALID],
    ['reset', UNAVAILABLE],
  ] as const) {
    it(`answers ${expected.code} "${expected.message.split(':')[0]}" where the ingress must read the EL's answer itself (eth_gasPrice) and it is ${m}`, async () => {
      mode = m;
      const { body } = await read('eth_gasPrice');
      expect(JSON.parse(body).error).to.deep.equal(expected);
    });
  }

  it('recorded every request it was sent, each one canonical JSON-RPC', () => {
    expect(received.length).to.be.greaterThan(10);
    for (const body of received) expect(Object.keys(JSON.parse(body))).to.deep.equal(['jsonrpc', 'id', 'method', 'params']);
  });
});
