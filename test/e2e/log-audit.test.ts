/**
 * What the log says at the default level while everything behind the ingress fails: never an
 * upstream's address (EL, node, Redis) and never the operator token.
 */
import { expect } from 'chai';
import { Wallet } from 'ethers';
import { startAnvil } from '../../devnet/anvil.js';
import { rpc } from '../../support/http.js';
import { DEV_KEYS } from '../../support/keys.js';
import { startStubEl } from '../../support/stub-el.js';
import { OPERATOR_TOKEN, startTestIngress, testConfig } from '../helpers/ingress.js';
import { startRedis } from '../helpers/redis.js';

describe('log audit at the default level', () => {
  it('names no upstream address and no secret while the EL, the node and Redis fail', async function () {
    this.timeout(30_000);
    // Redis first: where it cannot run, nothing else has been started that would keep mocha alive.
    const redis = await startRedis();
    const anvil = await startAnvil();
    const node = await startStubEl({});
    const plugins = `
  - batch-refuse
  - size-limit
  - auth:
      token_env: SVC_TEST_OPERATOR_TOKEN
  - allowlist
  - rate-limit:
      reads:
        per_source: {rate_per_second: 1000, burst: 1000}
  - gate
  - fee-rewrite
  - local-methods`;
    const yaml = testConfig(anvil.url, plugins, `store: redis\nredis_url: ${redis.url}`)
      .replace('log_level: debug', 'log_level: info')
      .replace('upstreams:', `upstreams:\n  node: ${node.url}`);
    const ingress = await startTestIngress(yaml);
    try {
      await anvil.stop();
      await node.close();
      await redis.stop();
      const raw = await new Wallet(DEV_KEYS[1]).signTransaction({
        chainId: 8141,
        nonce: 0,
        to: DEV_KEYS[0].slice(0, 42),
        value: 1n,
        gasLimit: 21_000,
        maxFeePerGas: 3_000_000_000n,
        type: 2,
      });
      const answers = [
        await rpc(ingress.url, 'eth_chainId'),
        await rpc(ingress.url, 'eth_gasPrice'),
        await rpc(ingress.url, 'eth_sendRawTransaction', [raw]),
        await rpc(ingress.url, 'svc_dropStats'),
        await rpc(ingress.url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}` }),
        await rpc(ingress.url, 'svc_nodeHealth', [], 1, { authorization: 'Bearer not-the-token-at-all' }),
      ].map((reply) => reply.text);
      expect(
        ingress.logs.some((line) => line.includes('"level":"warn"')),
        'something was worth a warning',
      ).to.equal(true);
      for (const text of [...ingress.logs, ...answers]) {
        for (const secret of [String(anvil.port), new URL(node.url).port, String(redis.port), OPERATOR_TOKEN]) {
          expect(text, 'a log line or answer').to.not.include(secret);
        }
      }
    } finally {
      await ingress.shutdown();
    }
  });
});
