/**
 * Fleet mode's cost, side by side in one run: two ingress processes with the shipped production
 * chain (rate limits on, quotas far above the load) on one anvil, one `store: memory`, one
 * `store: redis` on a real redis-server, loaded in turn by wrk (32 keep-alive clients) with
 * eth_chainId reads, then with duplicate submissions (each asks the duplicate window, which the
 * fleet keeps in Redis). Rounds alternate which goes first; the figure is the median of the
 * rounds' ratios. Redis commands per request come from Redis's own `INFO commandstats`, counted
 * over each of the redis instance's runs (warm-up included, so an upper bound).
 *
 *   npm run bench:fleet [-- seconds rounds]     needs wrk and redis-server (Debian packages)
 */
import { Wallet } from 'ethers';
import { Redis } from 'ioredis';
import { CHAIN_ID, startAnvil } from '../devnet/anvil.js';
import { rpc } from '../support/http.js';
import { DEV_KEYS } from '../support/keys.js';
import { startRedis } from '../test/helpers/redis.js';
import { median, rotated } from './measure.js';
import { benchIngress, ONE_ADDRESS_LOAD, productionChain, runBench, UNLIMITED_READS, UNLIMITED_SUBMISSIONS } from './production.js';
import { wrk, type Run } from './wrk.js';

const SECONDS = Number(process.argv[2] ?? 3);
const ROUNDS = Number(process.argv[3] ?? 5);
const CLIENTS = 32;
const READ = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';

const commandCalls = async (redis: Redis) =>
  [...(await redis.info('commandstats')).matchAll(/calls=(\d+)/g)].reduce((sum, [, calls]) => sum + Number(calls), 0);

runBench(async (stopLater) => {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const redisServer = await startRedis();
  stopLater(() => redisServer.stop());
  const redis = new Redis(redisServer.url);
  stopLater(() => redis.disconnect());
  const chain = productionChain(anvil.url, [UNLIMITED_READS, ...ONE_ADDRESS_LOAD, ...UNLIMITED_SUBMISSIONS]);
  const memory = await benchIngress(stopLater, chain);
  const fleet = await benchIngress(stopLater, chain.replace('store: memory', `store: redis\nredis_url: ${redisServer.url}`));
  await fleet.waitForLog('redis ready: shared state in use');
  // One admitted transfer per instance: its bytes, sent again, are the duplicate submissions.
  const duplicate = async (url: string, key: string) => {
    const raw = await new Wallet(key).signTransaction({
      chainId: CHAIN_ID,
      nonce: 0,
      to: '0x000000000000000000000000000000000000dEaD',
      value: 1n,
      gasLimit: 21_000,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 0n,
      type: 2,
    });
    const answer = JSON.parse((await rpc(url, 'eth_sendRawTransaction', [raw])).text) as { result?: string };
    if (answer.result === undefined) throw new Error(`the transfer was not admitted: ${JSON.stringify(answer)}`);
    return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] });
  };
  const bodies = { memory: await duplicate(memory.url, DEV_KEYS[1]!), redis: await duplicate(fleet.url, DEV_KEYS[2]!) };

  console.log(`fleet mode, ${new Date().toISOString()}, ${ROUNDS} rounds of ${SECONDS} s, wrk ${CLIENTS} clients, node ${process.version}`);
  for (const kind of ['reads', 'duplicate submissions'] as const) {
    const ratios: number[] = [];
    const perRequest: number[] = [];
    const runs: Record<'memory' | 'redis', Run[]> = { memory: [], redis: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of rotated(['memory', 'redis'] as const, round)) {
        const url = which === 'memory' ? memory.url : fleet.url;
        const body = kind === 'reads' ? READ : bodies[which];
        const before = which === 'redis' ? await commandCalls(redis) : 0;
        const run = await wrk(url, body, CLIENTS, SECONDS);
        runs[which].push(run);
        if (which === 'redis') perRequest.push(((await commandCalls(redis)) - before) / (run.rps * SECONDS));
      }
      ratios.push(runs.redis.at(-1)!.rps / runs.memory.at(-1)!.rps);
    }
    const line = (which: 'memory' | 'redis') =>
      `${Math.round(median(runs[which].map((r) => r.rps)))}/s, p99 ${median(runs[which].map((r) => r.p99)).toFixed(1)} ms`;
    console.log(
      `${kind}: memory ${line('memory')}; redis ${line('redis')}; redis / memory x${median(ratios).toFixed(2)} ` +
        `(rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}); Redis commands per request ${median(perRequest).toFixed(3)}`,
    );
  }
});
