/**
 * What a change costs a forwarded read: CPU per call of two ingress builds (or one build under two
 * chains) and the reference proxy, each pinned alone on the proxy core and loaded in turn by wrk on
 * the other, in paired rounds whose order rotates. Side by side (bench/reads.ts) the machine moves
 * more between runs than a change of a few percent does; paired alone, each round's figures are
 * comparable with each other, and the per-round figures are printed beside the medians.
 * A build is a checkout with dist/ built (`npm run build`); this one is `.`.
 *
 * With BENCH_SIDE_BY_SIDE=1, A and B instead run at once on the proxy core, each loaded by its own
 * wrk for the same seconds (as bench/reads.ts sets the ingress beside the reference): whatever the
 * machine does then, it does to both, so B/A of their rates is their ratio of cost per call. Of
 * the two, this resolves a few percent; paired alone rounds still swing by more.
 *
 *   node dist/bench/cpu-ab.js <checkout A> <checkout B> [rounds] [seconds]
 *   BENCH_SIDE_BY_SIDE=1 BENCH_METHODS=eth_call node dist/bench/cpu-ab.js ../old . 8
 *   BENCH_B_CHAIN=allowlist node dist/bench/cpu-ab.js . .      the shipped chain against allowlist alone
 *   BENCH_METHODS=eth_call BENCH_CLIENTS=1 node dist/bench/cpu-ab.js ../old .
 *
 * The read cache is off in both (`cache.max_bytes: 0`): the forwarding path alone.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { startAnvil } from '../devnet/anvil.js';
import { followIngress, writeConfig } from '../support/child.js';
import { LOAD_CPU, pin, PROXY_CPU } from './cores.js';
import { median, rotated } from './measure.js';
import {
  allowlistOnly,
  BENCH_READS,
  NO_READ_CACHE,
  ONE_ADDRESS_LOAD,
  productionChain,
  runBench,
  stopIngress,
  UNLIMITED_READS,
} from './production.js';
import { startReferenceProcess } from './reference-proxy.js';
import { wrk } from './wrk.js';

const [A = '.', B = '.'] = process.argv.slice(2, 4);
const ROUNDS = Number(process.argv[4] ?? 6);
const SECONDS = Number(process.argv[5] ?? 3);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const METHODS = (process.env.BENCH_METHODS ?? 'eth_blockNumber,eth_call').split(',');
const SIDE_BY_SIDE = process.env.BENCH_SIDE_BY_SIDE === '1';

/** The shipped chain, or (`allowlist`) that configuration with allowlist as its only plugin. */
function chainYaml(elUrl: string, chain: string | undefined): string {
  const shipped = productionChain(elUrl, [UNLIMITED_READS, ...ONE_ADDRESS_LOAD, NO_READ_CACHE]);
  if (chain === undefined) return shipped;
  if (chain !== 'allowlist') throw new Error(`BENCH_B_CHAIN: only "allowlist" is known, not ${chain}`);
  return allowlistOnly(shipped);
}

runBench(async (stopLater) => {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  pin(anvil.child.pid!, LOAD_CPU);
  const targets: Record<string, { url: string; pid: number }> = {};
  for (const [name, checkout, chain] of [
    ['A', A, undefined],
    ['B', B, process.env.BENCH_B_CHAIN],
  ] as const) {
    const configPath = writeConfig(chainYaml(anvil.url, chain));
    const child = spawn(process.execPath, ['dist/src/cli.js', '--config', configPath], {
      cwd: resolve(checkout),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ingress = await followIngress(child, configPath);
    stopLater(() => stopIngress(ingress));
    pin(child.pid!, PROXY_CPU);
    targets[name] = { url: ingress.url, pid: child.pid! };
  }
  console.log(`A: ${A}, B: ${B}${process.env.BENCH_B_CHAIN ? ` (chain: ${process.env.BENCH_B_CHAIN})` : ''}; ${CLIENTS} clients`);
  if (SIDE_BY_SIDE) return sideBySide(targets);
  const reference = await startReferenceProcess(anvil.url);
  stopLater(() => reference.stop());
  pin(reference.child.pid!, PROXY_CPU);
  targets.reference = { url: reference.url, pid: reference.child.pid! };

  console.log(`${ROUNDS} paired rounds of ${SECONDS} s; CPU µs per call, median [each round], and req/s median`);
  for (const method of METHODS) {
    const body = bodyOf(method);
    const cpu: Record<string, number[]> = { A: [], B: [], reference: [] };
    const rates: Record<string, number[]> = { A: [], B: [], reference: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of rotated(['A', 'B', 'reference'], round)) {
        const run = await wrk(targets[name]!.url, body, CLIENTS, SECONDS, { cpuPid: targets[name]!.pid, cpu: LOAD_CPU });
        cpu[name]!.push(run.cpuUsPerCall ?? Number.NaN);
        rates[name]!.push(run.rps);
      }
    }
    for (const name of ['A', 'B', 'reference']) {
      const each = cpu[name]!.map((us) => us.toFixed(0)).join(' ');
      console.log(
        `${method.padEnd(16)} ${name.padEnd(9)} ${median(cpu[name]!).toFixed(1).padStart(7)} µs [${each}]  ${median(rates[name]!).toFixed(0)}/s`,
      );
    }
    const ratios = cpu.B!.map((us, i) => us / cpu.A![i]!);
    console.log(`${method.padEnd(16)} B/A per round: ${ratios.map((r) => r.toFixed(2)).join(' ')} (median ${median(ratios).toFixed(2)})`);
  }
});

const bodyOf = (method: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: BENCH_READS[method] ?? [] });

/** A and B loaded at once, round after round: B/A of their rates and of their CPU per call. */
async function sideBySide(targets: Record<string, { url: string; pid: number }>): Promise<void> {
  console.log(`${ROUNDS} rounds of ${SECONDS} s, A and B side by side on the proxy core; B/A per round (median)`);
  for (const method of METHODS) {
    const rates: number[] = [];
    const costs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b] = await Promise.all(
        [targets.A!, targets.B!].map(({ url, pid }) => wrk(url, bodyOf(method), CLIENTS, SECONDS, { cpuPid: pid, cpu: LOAD_CPU })),
      );
      rates.push(b!.rps / a!.rps);
      costs.push(b!.cpuUsPerCall! / a!.cpuUsPerCall!);
    }
    const each = (xs: number[]) => `${xs.map((x) => x.toFixed(2)).join(' ')} (${median(xs).toFixed(3)})`;
    console.log(`${method.padEnd(16)} rate B/A ${each(rates)}; CPU per call B/A ${each(costs)}`);
  }
}
