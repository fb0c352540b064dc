/** What the benches read off processes and runs: CPU time from /proc, medians, rotation of rounds. */
import { readFileSync } from 'node:fs';

/** CPU seconds a process has used (user + system), from /proc; Linux's clock tick is 1/100 s. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** `items` starting at `round` (mod length), so that over rounds none is always measured first or last. */
export function rotated<T>(items: readonly T[], round: number): T[] {
  const start = round % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}
