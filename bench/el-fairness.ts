/**
 * What one source's gas-heavy reads cost another source (issue 25, row N2; issue 34, row A1),
 * through the svc-ingress process (shipped production chain, real anvil): the victim's
 * eth_getBalance, ECDSA-transfer, eth_call (naming gas and gasless) and eth_estimateGas medians (and the calls' 90th
 * percentile) quiet and under each attack (support/el-fairness.ts), for the shipped limits and
 * for the settings they replace.
 *
 *   npm run bench:el-fairness [seconds per phase]
 *
 * Rows: the shipped limits with anvil closing a block a second (the chain's cadence, what
 * test/e2e/el-fairness.test.ts asserts), the attacker retrying 100 ms after a 429 or at once; no
 * quick lane (quick_connections 0: one lane, as before issue 34, served by measured time); the
 * limits lifted (32 heavy reads per source, 128 heavy connections: as before issue 25, pricing
 * aside); and anvil mining on every transaction.
 */
import { startAnvil } from '../devnet/anvil.js';
import {
  ATTACKS,
  attack,
  NONCES_NOT_CONTIGUOUS,
  p50,
  p90,
  placeLoop,
  signTransfers,
  victim,
  type Transfers,
  type VictimLatencies,
} from '../support/el-fairness.js';
import { benchIngress, productionChain, runBench, stopIngress, type StopLater } from './production.js';

const PHASE_MS = Number(process.argv[2] ?? 4) * 1000;

const NO_QUICK_LANE = [['  # quick_connections: 1', '  quick_connections: 0']] as const;
const LIMITS_LIFTED = [
  ['  # heavy_connections: 1', '  heavy_connections: 128'],
  ['max_heavy_in_flight_per_source: 2', 'max_heavy_in_flight_per_source: 32'],
] as const;

const ROWS: ReadonlyArray<{
  label: string;
  blockTimeSeconds?: number;
  backoffMs: number;
  edits: ReadonlyArray<readonly [string, string]>;
}> = [
  { label: 'shipped limits, 1 s blocks, attacker retries 100 ms after a 429', blockTimeSeconds: 1, backoffMs: 100, edits: [] },
  { label: 'shipped limits, 1 s blocks, attacker retries at once', blockTimeSeconds: 1, backoffMs: 0, edits: [] },
  {
    label: 'no quick lane (quick_connections: 0), 1 s blocks, retries after 100 ms',
    blockTimeSeconds: 1,
    backoffMs: 100,
    edits: NO_QUICK_LANE,
  },
  { label: 'limits lifted (as before), 1 s blocks, retries after 100 ms', blockTimeSeconds: 1, backoffMs: 100, edits: LIMITS_LIFTED },
  { label: 'shipped limits, anvil mining every transaction, retries after 100 ms', backoffMs: 100, edits: [] },
];

/** A phase shorter than a victim's slowest call may end before one of a kind was answered. */
const NONE = 'none answered';
const p50ms = (values: readonly number[]) => (values.length === 0 ? NONE : `${p50(values).toFixed(2)} ms`);
const p50p90ms = (values: readonly number[]) => (values.length === 0 ? NONE : `${p50(values).toFixed(2)}/${p90(values).toFixed(1)} ms`);
const ratio = (attacked: readonly number[], quiet: readonly number[] | undefined) =>
  quiet === undefined || attacked.length === 0 || quiet.length === 0 ? '' : ` (x${(p50(attacked) / p50(quiet)).toFixed(1)})`;

const line = (what: string, latencies: VictimLatencies, quiet?: VictimLatencies) =>
  `  ${what.padEnd(20)} eth_getBalance p50 ${p50ms(latencies.reads)}${ratio(latencies.reads, quiet?.reads)}, ` +
  `transfers p50 ${p50ms(latencies.submissions)}${ratio(latencies.submissions, quiet?.submissions)}, ` +
  `eth_call p50/p90 ${p50p90ms(latencies.calls)}, gasless eth_call p50/p90 ${p50p90ms(latencies.views)}, ` +
  `eth_estimateGas p50/p90 ${p50p90ms(latencies.estimates)}`;

function report(what: string, attacked: VictimLatencies, quiet: VictimLatencies, outcomes: ReadonlyMap<string, number>): void {
  console.log(line(what, attacked, quiet));
  if (attacked.failures.length > 0)
    console.log(`  ${''.padEnd(20)} victim failed ${attacked.failures.length} times: ${attacked.failures[0]}`);
  console.log(`  ${''.padEnd(20)} attacker: ${[...outcomes].map(([reply, n]) => `${n} × ${reply.slice(0, 40)}`).join('; ')}`);
}

async function main(stopLater: StopLater): Promise<void> {
  console.log(`el-fairness bench: 127.0.0.2 reads and transfers while another source attacks (${PHASE_MS / 1000} s a phase)`);
  for (const row of ROWS) {
    const anvil = await startAnvil(row.blockTimeSeconds === undefined ? {} : { blockTimeSeconds: row.blockTimeSeconds });
    stopLater(() => anvil.stop());
    await placeLoop(anvil.url);
    const ingress = await benchIngress(stopLater, productionChain(anvil.url, [...row.edits, NONCES_NOT_CONTIGUOUS]));
    const transfers: Transfers = { raws: await signTransfers(1, 0, 500), next: 0 };
    const quiet = await victim(ingress.url, transfers, Date.now() + PHASE_MS);
    console.log(`\n${row.label}:`);
    console.log(line('quiet', quiet));
    for (const [name, attackOf] of Object.entries(ATTACKS)) {
      const { from, concurrency, body } = attackOf;
      // The attack's first seconds, where its source's first dear calls run (src/el-turns.ts), apart.
      const phases: ReadonlyArray<readonly [string, number]> =
        'warmUpMs' in attackOf
          ? [
              [`${name}, first ${attackOf.warmUpMs / 1000} s`, attackOf.warmUpMs],
              [name, PHASE_MS],
            ]
          : [[name, PHASE_MS]];
      for (const [label, ms] of phases) {
        const until = Date.now() + ms;
        const [attacked, outcomes] = await Promise.all([
          victim(ingress.url, transfers, until),
          attack(ingress.url, from, body, concurrency, until, row.backoffMs),
        ]);
        report(label, attacked, quiet, outcomes);
      }
    }
    await stopIngress(ingress);
    await anvil.stop();
  }
}

runBench(main);
