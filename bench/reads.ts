/**
 * Read throughput: req/s and p50/p99 for eth_chainId, eth_blockNumber, eth_getBalance and
 * eth_call at 1, 32 and 256 keep-alive clients (wrk, one thread), through the svc-ingress process
 * with the shipped production chain (rate limits raised), printed as ratios against the
 * reference Node proxy (its own process too), nginx proxy_pass with upstream keep-alive, and
 * anvil direct, all measured in this run.
 *
 * The machine is shared and its speed swings by a fifth within minutes, so each figure is the
 * median of several rounds, each round measuring every target once in a rotating order; beside
 * the rates, the CPU each proxy process spends per call (from /proc) over the same runs. Where
 * it can (bench/cores.ts), each proxy runs on a core of its own, wrk and anvil on the other.
 *
 * Then the ingress and the reference side by side: both on the proxy core at once, each loaded
 * by its own wrk for the same seconds. Whatever the machine does then, it does to both, so at
 * 32 and 256 clients, where both are busy all the time, the ratio of their rates (the core's time
 * split evenly between them) is their ratio of cost per call, and their p99s are taken under the
 * same conditions. (One client waits on each answer: there the rates follow latency instead.)
 * This is the figure the targets are read from; the table before it swings with the machine
 * between runs of one target and the next.
 *
 *   npm run bench:reads [-- seconds rounds pairedRounds]   needs wrk and nginx (Debian: apt-get install wrk nginx)
 *   npm run bench:reads -- 3 0 9                           side by side only, 9 rounds of 3 s
 *   BENCH_PIN=0 npm run bench:reads                        every process on every core, as before
 *   BENCH_METHODS=eth_call npm run bench:reads              only the methods named (comma-separated)
 *   BENCH_PROF=1 npm run bench:reads                        CPU profile of the ingress in /tmp/prof-reads
 *   BENCH_CACHE=0 npm run bench:reads                       the forwarding path: no read kept or shared
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAnvil } from '../devnet/anvil.js';
import { freePort } from '../support/ports.js';
import { canPin, LOAD_CPU, onCpu, pin, PROXY_CPU } from './cores.js';
import { median, rotated } from './measure.js';
import {
  BENCH_READS,
  benchIngress,
  NO_READ_CACHE,
  ONE_ADDRESS_LOAD,
  productionChain,
  runBench,
  UNLIMITED_READS,
  type StopLater,
} from './production.js';
import { startReferenceProcess } from './reference-proxy.js';
import { wrk, type Run } from './wrk.js';
import { scratchDir } from '../support/scratch.js';

const SECONDS = Number(process.argv[2] ?? 2);
const ROUNDS = Number(process.argv[3] ?? 3);
const PAIRED_ROUNDS = Number(process.argv[4] ?? 7);
const CLIENTS = [1, 32, 256];
const NAMED = process.env.BENCH_METHODS?.split(',');
const METHODS = Object.fromEntries(Object.entries(BENCH_READS).filter(([method]) => NAMED?.includes(method) ?? true));

async function startNginx(upstream: string, dir: string, cpu: number | undefined): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 4096; }
http { access_log off;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream el { server ${upstream.replace('http://', '')}; keepalive 128; }
  server { listen 127.0.0.1:${port};
    location / { proxy_pass http://el; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
`,
  );
  const child = spawn(...onCpu(cpu, 'nginx', ['-c', conf, '-p', dir, '-g', 'daemon off;']), { stdio: 'ignore' });
  // Bounded wait for the port to answer.
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    }).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `http://127.0.0.1:${port}`, stop: () => void child.kill('SIGTERM') };
}

/** Each target's runs of one (method, clients) cell, kept for medians. */
type Cell = Record<string, Run[]>;

/** The ingress's own duration histogram for one method, cumulative counts by upper bound (s). */
async function ownHistogram(metricsUrl: string, method: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const buckets = new Map<number, number>();
  const line = new RegExp(`^svc_ingress_request_duration_seconds_bucket\\{le="([^"]+)",method="${method}"\\} (\\d+)$`, 'gm');
  for (const [, le, count] of text.matchAll(line)) buckets.set(le === '+Inf' ? Infinity : Number(le), Number(count));
  return buckets;
}

/**
 * The bucket bound under which 99% of the calls between two readings fell: the ingress's own
 * time per call (body read to answer sent), which excludes what happens on the way to and from
 * the load generator.
 */
function ownP99Ms(before: Map<number, number>, after: Map<number, number>): number {
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  for (const [bound, count] of after) if (count - (before.get(bound) ?? 0) >= 0.99 * total) return bound * 1000;
  return Infinity;
}

function report(method: string, clients: number, cell: Cell, ownP99: number): void {
  const mid = (name: string, pick: (run: Run) => number) => median(cell[name]!.map(pick));
  const rps = (name: string) => mid(name, (r) => r.rps);
  const pct = (name: string) => `${((rps('ingress') / rps(name)) * 100).toFixed(0)}%`.padStart(7);
  const cpuRatio = mid('reference', (r) => r.cpuUsPerCall!) / mid('ingress', (r) => r.cpuUsPerCall!);
  const p99 = mid('ingress', (r) => r.p99);
  const refP99 = mid('reference', (r) => r.p99);
  console.log(
    `${method.padEnd(16)}${String(clients).padStart(4)} ${Math.round(rps('ingress')).toString().padStart(9)} ${mid('ingress', (r) => r.p50)
      .toFixed(2)
      .padStart(6)} ${p99.toFixed(2).padStart(7)} |` +
      `${pct('reference')}${pct('nginx')}${pct('direct')} | ${refP99.toFixed(2).padStart(7)} ${(p99 - refP99 >= 0 ? '+' : '') + (p99 - refP99).toFixed(2).padStart(6)} |` +
      ` ${mid('ingress', (r) => r.cpuUsPerCall!)
        .toFixed(0)
        .padStart(4)} ${mid('reference', (r) => r.cpuUsPerCall!)
        .toFixed(0)
        .padStart(4)} ${`${(cpuRatio * 100).toFixed(0)}%`.padStart(5)} |` +
      ` ${`≤ ${ownP99}`.padStart(6)}`,
  );
}

type Target = { url: string; pid?: number };

/**
 * One side-by-side round, repeated (up to twice, said on the output) when wrk saw socket
 * timeouts: with 512 connections on one core, now and then some connections of either proxy,
 * the reference as often as the ingress, wait 1-2 s right after the warm-up.
 */
async function bothAtOnce<T>(round: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await round();
    } catch (err) {
      if (attempt === 3 || !/Socket errors:.*timeout [1-9]/.test(String(err))) throw err;
      console.log('  (a round repeated: wrk saw socket timeouts)');
    }
  }
}

/** Ingress and reference loaded at once, PAIRED_ROUNDS times per cell; medians of the per-round ratios. */
async function sideBySide(ingress: Target, reference: Target, cpu: number | undefined): Promise<void> {
  console.log(`\ningress and reference side by side: both at once on one core, ${PAIRED_ROUNDS} rounds of ${SECONDS} s, medians`);
  console.log('method       clients | ingress req/s as % of ref | CPU µs/call ref/ing | p99 ms ingress    ref   diff');
  for (const [method, params] of Object.entries(METHODS)) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    for (const clients of CLIENTS) {
      const rounds: Array<{ rate: number; cost: number; p99: number; refP99: number }> = [];
      for (let round = 0; round < PAIRED_ROUNDS; round++) {
        const load = (target: Target) => wrk(target.url, body, clients, SECONDS, { cpuPid: target.pid, cpu });
        const [ing, ref] = await bothAtOnce(() => Promise.all([load(ingress), load(reference)]));
        rounds.push({ rate: ing.rps / ref.rps, cost: ref.cpuUsPerCall! / ing.cpuUsPerCall!, p99: ing.p99, refP99: ref.p99 });
      }
      const mid = (pick: (r: (typeof rounds)[number]) => number) => median(rounds.map(pick));
      const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
      const diff = mid((r) => r.p99) - mid((r) => r.refP99);
      console.log(
        `${method.padEnd(16)}${String(clients).padStart(4)} | ${pct(mid((r) => r.rate)).padStart(5)} [${rounds.map((r) => pct(r.rate)).join(' ')}]`.padEnd(
          56,
        ) +
          `| ${pct(mid((r) => r.cost)).padStart(18)} | ${mid((r) => r.p99)
            .toFixed(2)
            .padStart(14)} ${mid((r) => r.refP99)
            .toFixed(2)
            .padStart(6)} ${(diff >= 0 ? '+' : '') + diff.toFixed(2)}`,
      );
    }
  }
}

async function main(stopLater: StopLater): Promise<void> {
  const dir = scratchDir('svc-bench');
  const pinned = canPin();
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const reference = await startReferenceProcess(anvil.url);
  stopLater(() => reference.stop());
  const nginx = await startNginx(anvil.url, dir, pinned ? PROXY_CPU : undefined);
  stopLater(() => nginx.stop());
  const ingress = await benchIngress(
    stopLater,
    productionChain(anvil.url, [UNLIMITED_READS, ...ONE_ADDRESS_LOAD, ...(process.env.BENCH_CACHE === '0' ? [NO_READ_CACHE] : [])]),
    process.env.BENCH_PROF === '1' ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof-reads'] : [],
  );
  if (pinned) {
    pin(anvil.child.pid!, LOAD_CPU);
    pin(reference.child.pid!, PROXY_CPU);
    pin(ingress.child.pid!, PROXY_CPU);
  }
  const targets: Record<string, Target> = {
    direct: { url: anvil.url },
    nginx: { url: nginx.url },
    reference: { url: reference.url, pid: reference.child.pid! },
    ingress: { url: ingress.url, pid: ingress.child.pid! },
  };
  const metricsUrl = String((await ingress.waitForLog(/^operator listener/)).url);
  console.log(`reads: wrk -t1, ${new Date().toISOString()}, node ${process.version}`);
  console.log(
    pinned ? `pinned: each proxy on core ${PROXY_CPU}, wrk and anvil on core ${LOAD_CPU}` : 'not pinned: every process on every core',
  );
  const cpu = pinned ? LOAD_CPU : undefined;
  if (ROUNDS > 0) await oneAtATime(targets, metricsUrl, cpu);
  if (PAIRED_ROUNDS > 0) await sideBySide(targets.ingress!, targets.reference!, cpu);
}

/** Every target alone in turn, ROUNDS times per cell in a rotating order; medians. */
async function oneAtATime(targets: Record<string, Target>, metricsUrl: string, cpu: number | undefined): Promise<void> {
  const names = Object.keys(targets);
  console.log(`\none at a time: ${ROUNDS} rounds of ${SECONDS} s per target, medians`);
  console.log(
    '                        ingress                  | ingress req/s as % of  |   p99 ms        | CPU µs/call        | own p99 ms',
  );
  console.log('method       clients    req/s  p50 ms  p99 ms |   ref  nginx direct |     ref   diff  |  ing  ref ref/ing |');
  for (const [method, params] of Object.entries(METHODS)) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    for (const clients of CLIENTS) {
      const cell: Cell = Object.fromEntries(names.map((name) => [name, []]));
      const own = await ownHistogram(metricsUrl, method);
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of rotated(names, round)) {
          const { url, pid } = targets[name]!;
          cell[name]!.push(await wrk(url, body, clients, SECONDS, { cpuPid: pid, cpu }));
        }
      }
      // Includes the warm-ups: the bound is coarse anyway (the histogram's buckets).
      report(method, clients, cell, ownP99Ms(own, await ownHistogram(metricsUrl, method)));
    }
  }
}

runBench(main);
