import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { createCors } from '../../src/cors.js';

const GOOD = 'https://good.example';
const OTHER = 'https://other.example';

/** What CORS may add to an answer; anything else the test server writes is Node's own. */
const CORS_HEADERS = [
  'vary',
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
];

interface Reply {
  readonly status: number;
  /** Only the CORS headers, and content-length. */
  readonly headers: Record<string, unknown>;
  readonly text: string;
}

/**
 * A loopback server answering through one Cors as the ingress does: OPTIONS is a preflight,
 * anything else is decorated, then answered "ok".
 */
async function serve(allowedOrigins: readonly string[]): Promise<{ url: string; server: Server }> {
  const cors = createCors(allowedOrigins);
  const server = createServer((req, res) => {
    req.resume();
    if (req.method === 'OPTIONS') return cors.preflight(req, res);
    cors.decorate(req, res);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function send(url: string, method: 'POST' | 'OPTIONS', headers: Record<string, string>): Promise<Reply> {
  const reply = await request(url, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) });
  const picked: Record<string, unknown> = {};
  for (const name of [...CORS_HEADERS, 'content-length']) if (reply.headers[name] !== undefined) picked[name] = reply.headers[name];
  return { status: reply.statusCode, headers: picked, text: await reply.body.text() };
}

const preflightFrom = (origin: string, requested?: string) => ({
  origin,
  'access-control-request-method': 'POST',
  ...(requested === undefined ? {} : { 'access-control-request-headers': requested }),
});

describe('cors: allow-origin on answers, preflights answered here', () => {
  const servers: Server[] = [];
  const urls: Record<'any' | 'listed' | 'mixed' | 'none', string> = { any: '', listed: '', mixed: '', none: '' };
  before(async () => {
    const configs = { any: ['*'], listed: [GOOD, OTHER], mixed: [GOOD, '*'], none: [] } as const;
    for (const [name, origins] of Object.entries(configs) as Array<[keyof typeof urls, readonly string[]]>) {
      const { url, server } = await serve(origins);
      urls[name] = url;
      servers.push(server);
    }
  });
  after(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  describe('decorate (a simple request)', () => {
    it('adds nothing, not even Vary, to a request without an Origin header', async () => {
      for (const name of ['any', 'listed', 'mixed', 'none'] as const) {
        expect(await send(urls[name], 'POST', {}), name).to.deep.equal({ status: 200, headers: { 'content-length': '2' }, text: 'ok' });
      }
    });

    it('with "*", allows any origin and adds no Vary (the answer does not depend on it)', async () => {
      expect((await send(urls.any, 'POST', { origin: 'null' })).headers).to.deep.equal({
        'access-control-allow-origin': '*',
        'content-length': '2',
      });
    });

    it('with "*" among origins, does the same', async () => {
      expect((await send(urls.mixed, 'POST', { origin: 'https://elsewhere.example' })).headers).to.deep.equal({
        'access-control-allow-origin': '*',
        'content-length': '2',
      });
    });

    it('with a list, echoes a listed origin and says the answer varies by Origin', async () => {
      for (const origin of [GOOD, OTHER]) {
        expect((await send(urls.listed, 'POST', { origin })).headers, origin).to.deep.equal({
          vary: 'Origin',
          'access-control-allow-origin': origin,
          'content-length': '2',
        });
      }
    });

    it('with a list, allows no origin but an exact match (scheme, case, port, trailing slash), still with Vary', async () => {
      for (const origin of [
        'http://good.example',
        'https://GOOD.example',
        'https://good.example:443',
        `${GOOD}/`,
        'https://sub.good.example',
        'null',
      ]) {
        expect((await send(urls.listed, 'POST', { origin })).headers, origin).to.deep.equal({ vary: 'Origin', 'content-length': '2' });
      }
    });

    it('with an empty list, allows no origin', async () => {
      expect((await send(urls.none, 'POST', { origin: GOOD })).headers).to.deep.equal({ vary: 'Origin', 'content-length': '2' });
    });
  });

  describe('preflight', () => {
    it('answers an allowed origin with 204, an empty body, POST and OPTIONS, its requested headers and a 2-hour max age', async () => {
      expect(await send(urls.listed, 'OPTIONS', preflightFrom(GOOD, 'content-type, authorization,x-trace-id'))).to.deep.equal({
        status: 204,
        headers: {
          vary: 'Origin',
          'access-control-allow-origin': GOOD,
          'access-control-allow-methods': 'POST, OPTIONS',
          'access-control-allow-headers': 'content-type, authorization,x-trace-id',
          'access-control-max-age': '7200',
          'content-length': '0',
        },
        text: '',
      });
    });

    it('offers Content-Type and Authorization when no headers are requested', async () => {
      const reply = await send(urls.any, 'OPTIONS', preflightFrom(GOOD));
      expect(reply.headers['access-control-allow-headers']).to.equal('Content-Type, Authorization');
    });

    it('offers the same instead of echoing a requested list that is not plain header names', async () => {
      for (const requested of [
        'content-type;evil',
        'x_underscore',
        'a b',
        'content-type,',
        ',content-type',
        'content-type,,x',
        '<script>',
      ]) {
        const reply = await send(urls.any, 'OPTIONS', preflightFrom(GOOD, requested));
        expect(reply.headers['access-control-allow-headers'], requested).to.equal('Content-Type, Authorization');
      }
    });

    it('answers a refused origin with 204 and Vary only: the browser then blocks the call', async () => {
      expect(await send(urls.listed, 'OPTIONS', preflightFrom('https://evil.example', 'content-type'))).to.deep.equal({
        status: 204,
        headers: { vary: 'Origin', 'content-length': '0' },
        text: '',
      });
    });

    it('answers an OPTIONS without Origin with a bare 204', async () => {
      expect(await send(urls.any, 'OPTIONS', {})).to.deep.equal({ status: 204, headers: { 'content-length': '0' }, text: '' });
    });
  });
});
