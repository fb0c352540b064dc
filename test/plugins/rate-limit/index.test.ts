import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { useAnvil } from '../../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../../helpers/ingress.js';

/** A client on its own loopback address, for the suite: a distinct TCP peer, as distinct as a real one. */
function useClientAt(localAddress: string) {
  let agent: Agent;
  before(() => {
    agent = new Agent({ localAddress });
  });
  after(() => agent.close());
  const send = async (url: string, method: string, headers: Record<string, string> = {}) => {
    const reply = await request(url, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
    });
    return { status: reply.statusCode, retryAfter: reply.headers['retry-after'], body: JSON.parse(await reply.body.text()) };
  };
  return { send };
}

const limited = (scope: 'source' | 'host') => ({
  code: -32005,
  message:
    scope === 'source'
      ? 'rate limited: too many requests from this source; retry later'
      : 'rate limited: the endpoint is at capacity; retry later',
});

describe('rate-limit', () => {
  const anvil = useAnvil();
  const a = useClientAt('127.0.0.2');
  const b = useClientAt('127.0.0.3');
  const c = useClientAt('127.0.0.4');

  const limitedIngress = (options: string, extraPlugins = '') =>
    startTestIngress(testConfig(anvil.current.url, `\n  - allowlist\n  - rate-limit:\n${options}${extraPlugins}`));
  /** An ingress for one test, shut down however the test ends. */
  const withLimitedIngress = async (options: string, use: (ingress: TestIngress) => Promise<void>, extraPlugins = '') => {
    const ingress = await limitedIngress(options, extraPlugins);
    try {
      await use(ingress);
    } finally {
      await ingress.shutdown();
    }
  };

  describe('per source, then host-wide', () => {
    let ingress: TestIngress;
    before(async () => {
      ingress = await limitedIngress(`      reads:
        per_source: {rate_per_second: 3, burst: 3}
        host: {rate_per_second: 5, burst: 5}
        method_costs: {eth_getLogs: 3}`);
    });
    after(() => ingress.shutdown());

    it('refuses a source over its bucket with -32005 and HTTP 429, while another source is served', async () => {
      for (let i = 0; i < 3; i++) expect((await a.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      const over = await a.send(ingress.url, 'eth_chainId');
      expect(over.status).to.equal(429);
      expect(over.body.error).to.include(limited('source'));
      expect(over.body.error.data.retry_after_ms).to.be.a('number').and.above(0);
      expect(Number(over.retryAfter)).to.be.at.least(1);
      // A second source at the same moment still has its own bucket...
      expect((await b.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      expect((await b.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      // ...until the host-wide bucket (5) is spent by the sum of both: 3 + 2.
      const host = await c.send(ingress.url, 'eth_chainId');
      expect(host.status).to.equal(429);
      expect(host.body.error).to.include(limited('host'));
    });
  });

  it('serves a refused source again once the wait it was told has passed', async () => {
    await withLimitedIngress(
      `      reads:
        per_source: {rate_per_second: 2, burst: 10}
        method_costs: {eth_getLogs: 10}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_getLogs')).status).to.equal(200);
        const over = await a.send(ingress.url, 'eth_chainId');
        expect(over.status).to.equal(429);
        // One token at 2 per second; Retry-After rounds up to whole seconds.
        expect(over.body.error.data.retry_after_ms).to.be.within(1, 501);
        expect(over.retryAfter).to.equal('1');
        await sleep(over.body.error.data.retry_after_ms);
        expect((await a.send(ingress.url, 'eth_chainId')).body.result).to.equal('0x1fcd');
      },
    );
  });

  it('charges heavy reads their method cost', async () => {
    await withLimitedIngress(
      `      reads:
        per_source: {rate_per_second: 3, burst: 3}
        method_costs: {eth_getLogs: 3}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_getLogs')).status).to.equal(200);
        expect((await a.send(ingress.url, 'eth_chainId')).body.error).to.include(limited('source'));
      },
    );
  });

  it('does not let a source over its own quota drain the host bucket', async () => {
    await withLimitedIngress(
      `      reads:
        per_source: {rate_per_second: 1, burst: 1}
        host: {rate_per_second: 2, burst: 2}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_chainId')).status).to.equal(200);
        for (let i = 0; i < 5; i++) expect((await a.send(ingress.url, 'eth_chainId')).body.error).to.include(limited('source'));
        expect((await b.send(ingress.url, 'eth_chainId')).status).to.equal(200);
      },
    );
  });

  it('limits submissions in their own buckets', async () => {
    await withLimitedIngress(
      `      submissions:
        per_source: {rate_per_second: 1, burst: 1}`,
      async (ingress) => {
        expect((await a.send(ingress.url, 'eth_sendRawTransaction')).body.error.code).to.equal(-32602);
        expect((await a.send(ingress.url, 'eth_sendRawTransaction')).body.error).to.include(limited('source'));
        expect((await a.send(ingress.url, 'eth_chainId')).status).to.equal(200);
      },
      '\n  - gate',
    );
  });

  describe('X-Forwarded-For', () => {
    const options = `      reads:
        per_source: {rate_per_second: 1, burst: 1}`;

    it('changes nothing when spoofed by an untrusted peer', async () => {
      await withLimitedIngress(options, async (ingress) => {
        expect((await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.1' })).status).to.equal(200);
        const spoofed = await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.2' });
        expect(spoofed.body.error).to.include(limited('source'));
      });
    });

    it('selects the client behind a trusted proxy', async () => {
      await withLimitedIngress(`      trusted_proxies: [127.0.0.2]\n${options}`, async (ingress) => {
        expect((await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.1' })).status).to.equal(200);
        expect((await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '198.51.100.2' })).status).to.equal(200);
        const again = await a.send(ingress.url, 'eth_chainId', { 'x-forwarded-for': '203.0.113.5, 198.51.100.1' });
        expect(again.body.error).to.include(limited('source'));
      });
    });
  });
});
