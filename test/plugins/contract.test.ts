/** The contract every registered plugin keeps (src/plugin.ts). */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { OptionsReader } from '../../src/config/reader.js';
import { Facts } from '../../src/facts.js';
import { RequestTab } from '../../src/request-tab.js';
import { createLogger } from '../../src/log.js';
import { KNOWN_METHODS } from '../../src/methods.js';
import type { PluginEnv, RequestContext } from '../../src/plugin.js';
import { PLUGINS } from '../../src/registry.js';
import { Upstream } from '../../src/upstream.js';
import { pluginEnv } from '../helpers/plugin-env.js';

process.env.SVC_CONTRACT_TOKEN = 'contract-test-token-0123456789';
/** The smallest valid options of plugins that need some. */
const REQUIRED: Record<string, Record<string, unknown>> = { auth: { token_env: 'SVC_CONTRACT_TOKEN' } };

const log = createLogger('error');
/** Made for each run of the suite: closed after it. */
let upstream: Upstream;
let env: PluginEnv;

describe('plugin contract', () => {
  before(() => {
    upstream = new Upstream({ url: 'http://127.0.0.1:1', connections: 1, headersTimeoutMs: 100, bodyTimeoutMs: 100 });
    env = pluginEnv(upstream, log);
  });
  after(() => upstream.close());

  for (const [key, module] of PLUGINS) {
    describe(key, () => {
      it('is named like its YAML key and its file', () => {
        expect(module.name).to.equal(key);
        expect(existsSync(`plugins/${key}.ts`) || existsSync(`plugins/${key}/index.ts`)).to.equal(true);
      });

      it('refuses unknown option keys, naming the path', () => {
        const options = OptionsReader.of(`plugins[0].${key}`, { ...REQUIRED[key], no_such_option: 1 });
        expect(() => module.parseOptions(options)).to.throw(`plugins[0].${key}.no_such_option: unknown key`);
      });

      it('passes a method it has no business with, and closes idempotently', async () => {
        const plugin = await module.create(module.parseOptions(OptionsReader.of(key, REQUIRED[key])), env);
        const ctx: RequestContext = {
          request: Object.freeze({ jsonrpc: '2.0' as const, id: 1, method: 'eth_chainId', params: Object.freeze([]) }),
          peer: { address: '127.0.0.1', headers: {} },
          facts: new Facts(),
          tab: new RequestTab(),
        };
        expect(await plugin.handle?.(ctx)).to.equal(undefined);
        await plugin.close?.();
        await plugin.close?.();
      });

      it('passes every known method outside the methods it names (the chain skips it for those)', async () => {
        const plugin = await module.create(module.parseOptions(OptionsReader.of(key, REQUIRED[key])), env);
        try {
          if (plugin.methods === undefined) return;
          const candidates = [...KNOWN_METHODS, 'svc_validateTransaction', 'eth_sendTransaction', 'no_suchMethod'];
          for (const method of candidates.filter((m) => !plugin.methods!.has(m))) {
            const request = Object.freeze({ jsonrpc: '2.0' as const, id: 1, method, params: Object.freeze(['0x02ab']) });
            const verdict = await plugin.handle!({
              request,
              peer: { address: '127.0.0.1', headers: {} },
              facts: new Facts(),
              tab: new RequestTab(),
            });
            expect(verdict, method).to.equal(undefined);
          }
        } finally {
          await plugin.close?.();
        }
      });
    });
  }
});
