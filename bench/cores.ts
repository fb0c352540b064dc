/**
 * Where a bench puts its processes. On this 2-core machine the load generator, the EL and the
 * proxy under test otherwise fight over both cores, and how the scheduler splits them moves a
 * proxy's rate by a fifth from run to run. Pinned, the proxy under test has core 1 to itself and
 * wrk and the EL share core 0, so each proxy's rate follows its own cost per call.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** The core the proxy under test runs on; the load generator and the EL take core 0. */
export const PROXY_CPU = 1;
export const LOAD_CPU = 0;

/** Pinning needs two cores and taskset (util-linux); BENCH_PIN=0 turns it off. */
export function canPin(): boolean {
  if (process.env.BENCH_PIN === '0' || availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Moves every thread of a running process onto `cpu`. */
export function pin(pid: number, cpu: number): void {
  execFileSync('taskset', ['-apc', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** A command line that starts `command` on `cpu` (its children inherit it), or as it is. */
export function onCpu(cpu: number | undefined, command: string, args: readonly string[]): [string, string[]] {
  return cpu === undefined ? [command, [...args]] : ['taskset', ['-c', String(cpu), command, ...args]];
}
