/**
 * `workers: N` scaling: eth_chainId and eth_getBalance through the svc-ingress process with the
 * shipped production chain at 1 and 2 workers (wrk -t1, 32 and 256 keep-alive clients), as
 * ratios to one worker and to anvil direct, all in this run. The production chain rate-limits
 * reads per source, so with workers every read also makes one call to the primary, which holds
 * the shared buckets: the run shows what that costs.
 *
 *   npm run bench:workers [-- seconds]        needs wrk (Debian: apt-get install wrk)
 */
import { startAnvil } from '../devnet/anvil.js';
import { benchIngress, ONE_ADDRESS_LOAD, productionChain, runBench, UNLIMITED_READS, type StopLater } from './production.js';
import { wrk } from './wrk.js';

const SECONDS = Number(process.argv[2] ?? 3);
const DEV = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const CALLS = {
  eth_chainId: [],
  eth_getBalance: [DEV, 'latest'],
} as const;

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  console.log(`workers: wrk -t1, ${SECONDS} s per run, ${new Date().toISOString()}, node ${process.version}`);
  console.log('method            clients | direct req/s | 1 worker req/s  p99 ms | 2 workers req/s  p99 ms | 2 / 1   1 / direct');
  const ingress = async (workers: number) =>
    benchIngress(stopLater, productionChain(anvil.url, [UNLIMITED_READS, ...ONE_ADDRESS_LOAD, ['workers: 1', `workers: ${workers}`]]));
  const [one, two] = [await ingress(1), await ingress(2)];
  for (const [method, params] of Object.entries(CALLS)) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    for (const clients of [32, 256]) {
      const direct = await wrk(anvil.url, body, clients, SECONDS);
      const a = await wrk(one.url, body, clients, SECONDS);
      const b = await wrk(two.url, body, clients, SECONDS);
      console.log(
        `${method.padEnd(18)}${String(clients).padStart(7)} | ${Math.round(direct.rps).toString().padStart(12)} | ` +
          `${Math.round(a.rps).toString().padStart(14)} ${a.p99.toFixed(2).padStart(7)} | ${Math.round(b.rps).toString().padStart(15)} ${b.p99.toFixed(2).padStart(7)} | ` +
          `${(b.rps / a.rps).toFixed(2).padStart(5)} ${`${((a.rps / direct.rps) * 100).toFixed(0)}%`.padStart(11)}`,
      );
    }
  }
}

runBench(main);
