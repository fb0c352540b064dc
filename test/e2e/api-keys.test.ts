/**
 * Issue 37, item 4: keyed tenants. A partner's API key (as a bearer token or in the path) gets
 * the quota configured for it, apart from its address's bucket and fleet-wide; a key the
 * endpoint does not know gets HTTP 401; keys never reach a log line, names do.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { request } from 'undici';
import { parseConfig } from '../../src/config/load.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { scratchDir } from '../../support/scratch.js';

const KEY = 'partner-a-key-5f0c1e9a7d3b2468';
const OTHER_KEY = 'partner-b-key-0a1b2c3d4e5f6789';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const CHAIN_ID = '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}';

const plugins = (keysFile: string) => `
  - batch-refuse
  - size-limit
  - allowlist
  - rate-limit:
      reads: {per_source: {rate_per_second: 1, burst: 2}}
      api_keys:
        - name: partner-a
          sha256: ${sha256(KEY)}
          reads: {rate_per_second: 1, burst: 8}
      api_keys_file: ${keysFile}`;

async function ask(url: string, headers: Record<string, string> = {}, path = '/') {
  const reply = await request(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  });
  return { status: reply.statusCode, text: await reply.body.text() };
}
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('API keys: keyed tenants with quotas of their own (issue 37)', () => {
  const anvil = useAnvil();
  let keysFile: string;
  beforeEach(() => {
    keysFile = join(scratchDir('svc-keys'), 'keys.yaml');
    writeFileSync(keysFile, '[]\n');
  });

  describe('one instance', () => {
    let ingress: TestIngress;
    beforeEach(async () => {
      ingress = await startTestIngress(
        testConfig(anvil.current.url, plugins(keysFile), 'access_log: {}').replace('log_level: debug', 'log_level: info'),
      );
    });
    afterEach(() => ingress.shutdown());

    it("serves a key its own quota, apart from its address's bucket, by bearer token or path", async () => {
      const anonymous = [await ask(ingress.url), await ask(ingress.url), await ask(ingress.url)];
      expect(
        anonymous.map((a) => a.status),
        'the address: burst 2',
      ).to.deep.equal([200, 200, 429]);
      const keyed = [];
      for (let i = 0; i < 4; i++) keyed.push(await ask(ingress.url, bearer(KEY)));
      for (let i = 0; i < 4; i++) keyed.push(await ask(ingress.url, {}, `/${KEY}`));
      expect(
        keyed.map((a) => a.text),
        'the key: burst 8',
      ).to.deep.equal(Array(8).fill(CHAIN_ID));
      expect((await ask(ingress.url, bearer(KEY))).status).to.equal(429);
    });

    it('refuses a key it does not know with HTTP 401 and a JSON-RPC error', async () => {
      for (const [headers, path] of [
        [bearer('not-a-key'), '/'],
        [{}, `/${OTHER_KEY}`],
      ] as const) {
        expect(await ask(ingress.url, headers, path)).to.deep.equal({
          status: 401,
          text: '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"unauthorized: unknown API key"}}',
        });
      }
    });

    it('logs and counts names, never keys', async () => {
      await ask(ingress.url, bearer(KEY));
      await ask(ingress.url, bearer(OTHER_KEY));
      const access = ingress.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'access');
      expect(access.map((entry) => [entry.source, entry.status])).to.deep.equal([
        ['key:partner-a', 200],
        ['127.0.0.1', 401],
      ]);
      expect(ingress.logs.join('\n')).to.not.include(KEY).and.to.not.include(OTHER_KEY);
    });

    it('takes the keys of api_keys_file again on reload', async () => {
      expect((await ask(ingress.url, bearer(OTHER_KEY))).status, 'before').to.equal(401);
      writeFileSync(keysFile, `- name: partner-b\n  sha256: ${sha256(OTHER_KEY)}\n`);
      await ingress.reload(parseConfig(testConfig(anvil.current.url, plugins(keysFile), 'access_log: {}')));
      expect((await ask(ingress.url, bearer(OTHER_KEY))).text, 'after').to.equal(CHAIN_ID);
    });
  });

  describe('two instances sharing Redis', () => {
    let redis: RedisServer;
    let one: TestIngress;
    let two: TestIngress;
    before(async () => {
      redis = await startRedis();
    });
    after(() => redis?.stop());
    beforeEach(async () => {
      const yaml = testConfig(anvil.current.url, plugins(keysFile), `store: redis\nredis_url: ${redis.url}`).replace(
        'log_level: debug',
        'log_level: error',
      );
      [one, two] = [await startTestIngress(yaml), await startTestIngress(yaml)];
    });
    afterEach(async () => {
      await Promise.all([one.shutdown(), two.shutdown()]);
    });

    it("counts a key's requests at every instance against its one quota", async () => {
      for (let i = 0; i < 8; i++) expect((await ask(one.url, bearer(KEY))).status, `at one, ${i}`).to.equal(200);
      // The other instance learns of them at its next sync (50 ms): paced past that, it admits at
      // most what those first moments and the refill (1/s) allow, not a second burst of 8.
      let admitted = 0;
      for (let i = 0; i < 12; i++) {
        if ((await ask(two.url, bearer(KEY))).status === 200) admitted++;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(admitted).to.be.at.most(4);
    });
  });
});
