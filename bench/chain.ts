/**
 * What the plugin chain's own code costs a request, in process and without I/O: the shipped
 * production chain (rate limits raised) runs a read and closes its tab, as the server does,
 * against `allowlist` alone; µs per request over rounds, the heap aged between them (a server's
 * long-lived Maps are in old space, where V8 makes some operations ten times dearer).
 *
 *   node dist/bench/chain.js [requests per round] [rounds]
 *   BENCH_METHODS=eth_blockNumber,eth_call,eth_getBalance
 */
import { Chain } from '../src/chain.js';
import { parseConfig } from '../src/config/load.js';
import { Facts } from '../src/facts.js';
import { createLogger } from '../src/log.js';
import { Metrics } from '../src/metrics.js';
import type { RequestContext } from '../src/plugin.js';
import { RequestTab } from '../src/request-tab.js';
import { Upstream } from '../src/upstream.js';
import { pluginEnv } from '../test/helpers/plugin-env.js';
import { median } from './measure.js';
import { allowlistOnly, BENCH_READS, ONE_ADDRESS_LOAD, productionChain, runBench, UNLIMITED_READS } from './production.js';

const REQUESTS = Number(process.argv[2] ?? 300_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const METHODS = (process.env.BENCH_METHODS ?? 'eth_blockNumber,eth_getBalance,eth_call').split(',');
/** Never asked: the chain answers reads without the EL, and the gate reads it only for submissions. */
const NO_EL = 'http://127.0.0.1:9';

async function chainOf(allowlistAlone: boolean): Promise<Chain> {
  process.env.SVC_BENCH_TOKEN ??= 'bench-operator-token-of-32-chars!';
  const shipped = productionChain(NO_EL, [UNLIMITED_READS, ...ONE_ADDRESS_LOAD]);
  const yaml = allowlistAlone ? allowlistOnly(shipped) : shipped;
  const metrics = new Metrics();
  const upstream = new Upstream({ url: NO_EL, connections: 1, headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 });
  return Chain.create(parseConfig(yaml).plugins, pluginEnv(upstream, createLogger('error'), metrics), metrics);
}

/** Allocates and drops enough to run a few scavenges: what the chain holds is old afterwards. */
function ageTheHeap(): void {
  let junk: object[] = [];
  for (let i = 0; i < 2_000_000; i++) junk.push({ i });
  junk = [];
}

runBench(async (stopLater) => {
  const headers = { host: '127.0.0.1:8545', 'content-type': 'application/json', 'content-length': '64' };
  console.log(`${REQUESTS} requests per round, ${ROUNDS} rounds; µs per request (chain.run and the tab's close), median [each round]`);
  for (const allowlistAlone of [false, true]) {
    const chain = await chainOf(allowlistAlone);
    stopLater(() => chain.close());
    for (const method of METHODS) {
      const perRequest: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const started = performance.now();
        for (let i = 0; i < REQUESTS; i++) {
          const ctx: RequestContext = {
            request: { jsonrpc: '2.0', id: 1, method, params: BENCH_READS[method] ?? [] },
            peer: { address: '127.0.0.1', headers, path: '/' },
            facts: new Facts(),
            tab: new RequestTab(),
          };
          const verdict = chain.run(ctx);
          if (verdict !== undefined) throw new Error(`${method} was answered by the chain: ${JSON.stringify(verdict)}`);
          ctx.tab.close();
        }
        perRequest.push(((performance.now() - started) * 1_000) / REQUESTS);
        ageTheHeap();
      }
      const each = perRequest.map((us) => us.toFixed(2)).join(' ');
      console.log(
        `${allowlistAlone ? 'allowlist alone' : 'shipped chain  '} ${method.padEnd(16)} ${median(perRequest).toFixed(2)} [${each}]`,
      );
    }
  }
});
