/**
 * Every bench of BENCHMARKS.md run to its end, one after another, with the smallest arguments
 * that still take it through each of its phases: its exit code and time. A bench that no longer
 * runs (a limit it does not raise, an answer it does not expect) shows here within minutes, not
 * when its figures are next needed (bench:idle died on its 157th connection for a week).
 *
 *   npm run bench:smoke                   needs what the benches need: wrk, nginx, taskset, redis-server
 *   npm run bench:smoke -- idle chain     only those named
 *
 * The figures the benches print are too short to mean anything; each bench's output is kept in
 * a temporary directory, named on a failure.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScript } from '../support/child.js';

/** The bench (dist/bench/<name>.js), its arguments, and what it is told in its environment. */
const BENCHES: ReadonlyArray<readonly [string, readonly string[], Record<string, string>?]> = [
  ['reads', ['1', '1', '1'], { BENCH_METHODS: 'eth_chainId,eth_call' }],
  ['forwarders', ['1', '1']],
  ['cpu-ab', ['.', '.', '1', '1'], { BENCH_METHODS: 'eth_blockNumber' }],
  ['cpu-ab', ['.', '.', '1', '1'], { BENCH_METHODS: 'eth_call', BENCH_SIDE_BY_SIDE: '1' }],
  ['chain', ['20000', '1']],
  ['gate', ['1000', '20']],
  ['victim', ['1']],
  ['el-fairness', ['1']],
  ['metered', ['2']],
  ['stream', ['3']],
  ['history', ['1', '1', '8', '5']],
  ['subscriptions', ['2', '0']],
  ['idle', ['500']],
  ['workers', ['1']],
  ['simulation', ['1', '1', '200']],
  ['fleet', ['1', '1']],
  ['crypto', ['2000']],
];

/** Past runBench's own 30-minute deadline: a bench that hangs is killed. */
const BENCH_DEADLINE_MS = 35 * 60_000;
const named = process.argv.slice(2);
const unknown = named.filter((name) => !BENCHES.some(([bench]) => bench === name));
if (unknown.length > 0) throw new Error(`no bench named ${unknown.join(', ')}`);
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-smoke-'));
const failed: string[] = [];
for (const [index, [name, args, env]] of BENCHES.entries()) {
  if (named.length > 0 && !named.includes(name)) continue;
  const started = performance.now();
  const { code, out } = await runScript(`bench/${name}.js`, env ?? {}, BENCH_DEADLINE_MS, args);
  // One bench may run in two modes: each run's output has a file of its own.
  const log = join(dir, `${index}-${name}.log`);
  writeFileSync(log, out);
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(
    `${name.padEnd(14)} ${seconds.padStart(4)} s  ${code === 0 ? 'ran to its end' : `FAILED (exit ${code ?? 'killed'}): ${log}`}`,
  );
  if (code !== 0) failed.push(name);
}
console.log(failed.length === 0 ? `every bench ran to its end (output in ${dir})` : `failed: ${failed.join(', ')}`);
process.exitCode = failed.length === 0 ? 0 : 1;
