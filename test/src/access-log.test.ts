/**
 * The access log and request ids (issue 37, item 3): through a real ingress in front of anvil,
 * what a client sees on the answer and what one line per request says, and says nothing of.
 */
import { expect } from 'chai';
import { request } from 'undici';
import { createAccessLog, errorCodeOf, requestIdOf } from '../../src/access-log.js';
import { createLogger } from '../../src/log.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const PLUGINS = `
  - batch-refuse
  - size-limit
  - allowlist
  - rate-limit:
      reads: {per_source: {rate_per_second: 1, burst: 3}}`;

describe('access log and request ids (access-log.ts)', () => {
  describe('its parts', () => {
    it("takes a client's plain token as its id, makes one otherwise (when asked), and refuses anything else", () => {
      expect(requestIdOf('b0a1c3d4e5f6-7', false)).to.equal('b0a1c3d4e5f6-7');
      expect(requestIdOf('two words', false), 'not a token').to.equal(undefined);
      expect(requestIdOf('x'.repeat(129), false), 'too long').to.equal(undefined);
      expect(requestIdOf(['a', 'b'], false), 'sent twice').to.equal(undefined);
      const [one, two] = [requestIdOf(undefined, true)!, requestIdOf('{"json"}', true)!];
      expect(one).to.match(/^[0-9a-f]{8}-[0-9a-z]+$/);
      expect(two).to.not.equal(one);
    });

    it('reads the code of an answer the ingress wrote, null for a result or nothing', () => {
      expect(errorCodeOf('{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limited"}}')).to.equal(-32005);
      expect(errorCodeOf('{"jsonrpc":"2.0","id":1,"result":"0x1"}')).to.equal(null);
      expect(errorCodeOf(undefined)).to.equal(null);
    });

    it('writes one request in one_in, by count, building the entry only then', () => {
      const lines: string[] = [];
      let built = 0;
      const log = createAccessLog(
        3,
        createLogger('error', (line) => lines.push(line)),
      );
      for (let i = 0; i < 7; i++) {
        log(() => {
          built++;
          return { request_id: String(i), source: '192.0.2.1', method: 'eth_chainId', status: 200, code: null, bytes: 40, ms: 1 };
        });
      }
      expect(built).to.equal(2);
      expect(lines.map((line) => JSON.parse(line).request_id)).to.deep.equal(['2', '5']);
    });
  });

  describe('through the ingress', () => {
    const anvil = useAnvil();
    let ingress: TestIngress;
    before(async () => {
      ingress = await startTestIngress(
        testConfig(anvil.current.url, PLUGINS, 'access_log: {}').replace('log_level: debug', 'log_level: error'),
      );
    });
    after(() => ingress.shutdown());

    const post = async (body: string, headers: Record<string, string> = {}) => {
      const reply = await request(ingress.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      return { status: reply.statusCode, id: reply.headers['x-request-id'], text: await reply.body.text() };
    };
    const lines = () => ingress.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'access');

    it('logs each request once: its id (echoed on the answer), source, method, status, code, bytes, ms; never its params', async () => {
      const from = lines().length;
      const read = await post(
        '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000c0ffe","latest"]}',
        {
          'x-request-id': 'nginx-4f1c2a',
        },
      );
      expect(read).to.include({ status: 200, id: 'nginx-4f1c2a' });
      const parse = await post('{"jsonrpc"');
      expect(parse.id, 'made here').to.match(/^[0-9a-f]{8}-[0-9a-z]+$/);
      const logged = lines().slice(from);
      expect(logged.map(({ time: _time, ms, ...rest }) => ({ ...rest, timed: typeof ms === 'number' }))).to.deep.equal([
        {
          level: 'info',
          msg: 'access',
          request_id: 'nginx-4f1c2a',
          source: '127.0.0.1',
          method: 'eth_getBalance',
          status: 200,
          code: null,
          bytes: Buffer.byteLength(read.text),
          timed: true,
        },
        {
          level: 'info',
          msg: 'access',
          request_id: parse.id,
          source: '127.0.0.1',
          method: null,
          status: 200,
          code: -32700,
          bytes: Buffer.byteLength(parse.text),
          timed: true,
        },
      ]);
      expect(JSON.stringify(logged)).to.not.include('c0ffe');
    });

    it('logs a refusal with its HTTP status and JSON-RPC code', async () => {
      let refused: Awaited<ReturnType<typeof post>> | undefined;
      for (let i = 0; i < 8 && refused === undefined; i++) {
        const answer = await post('{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[]}');
        if (answer.status === 429) refused = answer;
      }
      expect(refused, 'refused by the bucket').to.not.equal(undefined);
      const line = lines().find((entry) => entry.request_id === refused!.id)!;
      expect(line).to.include({ method: 'eth_chainId', status: 429, code: -32005, bytes: Buffer.byteLength(refused!.text) });
    });
  });

  describe('without an access log', () => {
    const anvil = useAnvil();
    it("echoes a client's request id, and makes none", async () => {
      const ingress = await startTestIngress(testConfig(anvil.current.url, PLUGINS));
      try {
        const ask = (headers: Record<string, string>) =>
          request(ingress.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
          }).then(async (reply) => {
            await reply.body.text();
            return reply.headers['x-request-id'];
          });
        expect(await ask({ 'x-request-id': 'abc-123' })).to.equal('abc-123');
        expect(await ask({})).to.equal(undefined);
        expect(ingress.logs.filter((line) => line.includes('"msg":"access"'))).to.deep.equal([]);
      } finally {
        await ingress.shutdown();
      }
    });
  });
});
