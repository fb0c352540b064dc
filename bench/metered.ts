/**
 * Issue 25's N1, measured: another source's ML-DSA-65 transfers (latency of the gate's answer,
 * each admitted) while 1 or 12 sources flood frame transactions whose VERIFY code STATICCALLs a
 * 24,576-byte contract in a loop (support/costly-verify.ts), each at the shipped sustained quota;
 * and the ingress's CPU in the seconds after the flooding sources disconnect. The shipped production chain in its
 * own process, anvil, a recording submission target; with `workers: 2` as a last phase.
 *
 *   npm run bench:metered -- [transfers per phase, default 16]
 */
import { Pool } from 'undici';
import { startAnvil } from '../devnet/anvil.js';
import {
  cpuEachSecond,
  floodCostlyVerify,
  fundedMldsaTransfers,
  p90,
  placeCostlyAccounts,
  victimLatencies,
} from '../support/costly-verify.js';
import { startSubmitTarget } from '../support/submit-target.js';
import { median } from './measure.js';
import { benchIngress, productionChain, runBench, stopIngress, type StopLater } from './production.js';

const TRANSFERS = Number(process.argv[2] ?? 16);
const SOURCES = 12;
/** The victim's transfers go out this far apart: a phase lasts TRANSFERS × GAP_MS. */
const GAP_MS = 500;

const summary = (sorted: readonly number[]) => `median ${median(sorted).toFixed(0)} ms, p90 ${p90(sorted).toFixed(0)} ms`;

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const target = await startSubmitTarget();
  stopLater(() => target.close());
  await placeCostlyAccounts(anvil.url, SOURCES);
  console.log(`metered bench: ${TRANSFERS} ML-DSA-65 transfers per phase, ${GAP_MS} ms apart, from 8 victim addresses`);
  for (const workers of [1, 2]) {
    const ingress = await benchIngress(
      stopLater,
      productionChain(anvil.url, [
        [`submit: ${anvil.url}`, `submit: ${target.url}`],
        ['workers: 1', `workers: ${workers}`],
      ]),
    );
    const victims = Array.from({ length: 8 }, (_, i) => new Pool(ingress.url, { connections: 1, localAddress: `127.0.0.${100 + i}` }));
    const transfers = (count: number) => fundedMldsaTransfers(anvil.url, count);
    await victimLatencies(victims, ingress.url, await transfers(workers * 2));
    console.log(`\nworkers: ${workers}`);
    console.log(`  quiet:        ${summary(await victimLatencies(victims, ingress.url, await transfers(TRANSFERS), GAP_MS))}`);
    for (const sources of [1, SOURCES]) {
      const raws = await transfers(TRANSFERS);
      const flood = floodCostlyVerify(ingress.url, sources);
      const latencies = await victimLatencies(victims, ingress.url, raws, GAP_MS);
      await flood.stop();
      const after = await cpuEachSecond(ingress.child.pid!, 3);
      console.log(
        `  ${String(sources).padStart(2)} source(s): ${summary(latencies)}; CPU each second after they left: ${after.map((s) => s.toFixed(2)).join(', ')} s`,
      );
      console.log(`               attackers: ${[...flood.outcomes].map(([what, n]) => `${n} × ${what}`).join('; ')}`);
    }
    await Promise.all(victims.map((pool) => pool.close()));
    await stopIngress(ingress);
  }
}

runBench(main);
