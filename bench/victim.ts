/**
 * What one source's expensive submissions cost everyone else: another source's `eth_chainId`
 * latency (median, p90) through the svc-ingress process (shipped production chain, real anvil),
 * quiet and while one source floods frame transactions carrying 14 valid P256 entries each (the
 * most verification work one transaction may carry within the prefix budget).
 *
 *   npm run build && node dist/bench/victim.js [seconds]
 *
 * Two floods: at the shipped submission quota (10/s, burst 50; entries priced at one token per
 * 10,000 gas, so ten tokens each), and with the quota raised 100-fold, where only the worker
 * pool's bound protects the event loop. The attacker is 127.0.0.1, the victim 127.0.0.2.
 */
import { Pool } from 'undici';
import { startAnvil } from '../devnet/anvil.js';
import { p256HeavyFrames } from '../support/frames.js';
import { median } from './measure.js';
import { benchIngress, productionChain, runBench, stopIngress, type StopLater } from './production.js';

const SECONDS = Number(process.argv[2] ?? 5);
const ENTRIES = 14;
const ATTACK_CLIENTS = 8;

/** The victim: one eth_chainId at a time from 127.0.0.2 until `until`, latencies in ms. */
async function victim(url: string, until: number): Promise<number[]> {
  const pool = new Pool(url, { connections: 1, localAddress: '127.0.0.2' });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
  const latencies: number[] = [];
  while (Date.now() < until) {
    const start = performance.now();
    const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await reply.body.text();
    if (!text.includes('0x1fcd')) throw new Error(`victim: unexpected answer ${text}`);
    latencies.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await pool.close();
  return latencies;
}

/** The attacker: ATTACK_CLIENTS clients sending the flood in a loop from 127.0.0.1 until `until`. */
async function attack(url: string, raws: readonly string[], until: number): Promise<Map<string, number>> {
  const pool = new Pool(url, { connections: ATTACK_CLIENTS, localAddress: '127.0.0.1' });
  const outcomes = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: ATTACK_CLIENTS }, async () => {
      while (Date.now() < until) {
        const raw = raws[next++ % raws.length]!;
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] });
        const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const answer = JSON.parse(await reply.body.text()) as { error?: { message: string } };
        const what = (answer.error?.message ?? 'admitted').replace(/0x[0-9a-f]+/g, '0x…').replace(/\d{4,}/g, 'N');
        outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
      }
    }),
  );
  await pool.close();
  return outcomes;
}

const summary = (latencies: number[]) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return `median ${median(sorted).toFixed(2)} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)]!.toFixed(2)} ms (${sorted.length} calls)`;
};

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  console.log(
    `victim bench: eth_chainId from 127.0.0.2 while 127.0.0.1 floods ${ENTRIES}-entry P256 frame transactions (${SECONDS} s each)`,
  );
  const raws = p256HeavyFrames(400);
  const floods: Array<[string, ReadonlyArray<readonly [string, string]>]> = [
    ['shipped quota (10/s, burst 50)', []],
    [
      'quota raised 100-fold (1,000/s, burst 5,000)',
      [['per_source: {rate_per_second: 10, burst: 50}', 'per_source: {rate_per_second: 1000, burst: 5000}']],
    ],
  ];
  for (const [label, edits] of floods) {
    const ingress = await benchIngress(stopLater, productionChain(anvil.url, edits));
    const quiet = await victim(ingress.url, Date.now() + SECONDS * 1000);
    const until = Date.now() + SECONDS * 1000;
    const [attacked, outcomes] = await Promise.all([victim(ingress.url, until), attack(ingress.url, raws, until)]);
    await stopIngress(ingress);
    console.log(`\n${label}:`);
    console.log(`  victim, quiet:          ${summary(quiet)}`);
    console.log(`  victim, under the flood: ${summary(attacked)}`);
    for (const [what, n] of outcomes) console.log(`  attacker: ${n} × ${what}`);
  }
}

runBench(main);
