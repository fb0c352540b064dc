/**
 * A recording fake EL switched between failure modes, behind the real ingress: each mode gets
 * its documented answer, the ingress survives every one, and a healthy EL is served again after.
 */
import { expect } from 'chai';
import { rpc } from '../../support/http.js';
import { CUT, HANG, startStubEl, type StubEl, type StubReply } from '../../support/stub-el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const UNAVAILABLE = { code: -32603, message: 'upstream unavailable: the execution layer did not answer' };
const INVALID = { code: -32603, message: 'upstream error: the execution layer answered an invalid response' };

const chainId = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' });

/** What the fake EL answers any request with, in each mode. */
const REPLIES = {
  healthy: chainId,
  hang: () => HANG, // accepts, reads, never answers
  drip: (id) => ({ body: chainId(id), dripMs: 20 }), // a valid answer, one byte every 20 ms
  reset: () => CUT,
  'garbage-html': () => ({ headers: { 'content-type': 'text/html' }, body: '<html>oops</html>' }),
  'garbage-json': () => '}{not json',
  'server-error': () => ({ status: 500, body: '{"error":"internal"}' }),
  'wrong-type': () => ({ headers: { 'content-type': 'application/octet-stream' }, body: '\x00\x01' }),
  empty: () => ({}),
  // Valid JSON-RPC, but past the 4 MiB the ingress reads of an answer it parses itself.
  oversized: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: 'a'.repeat(5 * 1024 * 1024) }),
} satisfies Record<string, (id: unknown) => StubReply>;
type Mode = keyof typeof REPLIES;

describe('upstream faults: one recording fake EL, many modes', () => {
  let mode: Mode = 'healthy';
  let el: StubEl;
  let ingress: TestIngress;

  before(async () => {
    el = await startStubEl({}, { intercept: ({ request }) => REPLIES[mode](request.id) });
    ingress = await startTestIngress(testConfig(el.url));
  });
  after(async () => {
    await ingress.shutdown();
    await el.close();
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
    await el.close();
    expect(JSON.parse((await read()).body).error).to.deep.equal(UNAVAILABLE);
    await el.reopen();
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
    expect(el.bodies.length).to.be.greaterThan(10);
    for (const body of el.bodies) expect(Object.keys(JSON.parse(body))).to.deep.equal(['jsonrpc', 'id', 'method', 'params']);
  });
});
