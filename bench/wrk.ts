/** wrk (Debian: apt-get install wrk) as the load generator: one thread, keep-alive clients, one POST body. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onCpu } from './cores.js';
import { cpuSeconds } from './measure.js';
import { scratchDir } from '../support/scratch.js';

export interface Run {
  rps: number;
  p50: number;
  p99: number;
  /** CPU (user + system) `cpuPid` spent per answered call over the measured seconds, in µs. */
  cpuUsPerCall?: number;
}

const SETTLE_MS = 2_000;

/** wrk's durations: 95.2us, 1.20ms, 2.01s, 1.00m. */
function ms(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!match) throw new Error(`unreadable wrk duration ${text}`);
  const value = Number(match[1]);
  return value * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as 'us' | 'ms' | 's' | 'm'];
}

export interface WrkOptions {
  /** A flood meant to get non-2xx answers (429s); otherwise any fails the run. */
  readonly expectNon2xx?: boolean;
  /** Report this process's CPU over the measured seconds, per call. */
  readonly cpuPid?: number;
  /** Run wrk on this core (bench/cores.ts). */
  readonly cpu?: number;
}

/** wrk's script: one body, or several sent in turn by each connection. */
function script(body: string | readonly string[]): string {
  if (typeof body === 'string')
    return `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n`;
  return [
    'local bodies = {',
    ...body.map((b) => `  ${JSON.stringify(b)},`),
    '}',
    'local i = 0',
    'local headers = { ["Content-Type"] = "application/json" }',
    'request = function()',
    '  i = i % #bodies + 1',
    '  return wrk.format("POST", "/", headers, bodies[i])',
    'end',
    '',
  ].join('\n');
}

/** A one-second warm-up, then `seconds` measured. `body`: one, or several sent in turn. */
export async function wrk(
  url: string,
  body: string | readonly string[],
  clients: number,
  seconds: number,
  options: WrkOptions = {},
): Promise<Run> {
  const { expectNon2xx = false, cpuPid, cpu } = options;
  const run = (args: string[]) => promisify(execFile)(...onCpu(cpu, 'wrk', args));
  const scriptPath = join(scratchDir('svc-bench-wrk'), 'post.lua');
  writeFileSync(scriptPath, script(body));
  // Connection set-up (clients and upstream pools, which idle out between runs) and JIT
  // warm-up otherwise land in the measured tail.
  await run(['-t1', `-c${clients}`, '-d1s', '-s', scriptPath, url]);
  // wrk ends the warm-up by cutting its connections mid-request; straight after that, a Node
  // proxy answers some of the next run's first requests 0.2-1 s late (the reference and the
  // ingress alike, nginx and anvil not; the ingress's own histogram never sees the delay, so
  // it is before the request reaches the proxy). Two quiet seconds make it go away.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const cpuBefore = cpuPid === undefined ? 0 : cpuSeconds(cpuPid);
  const { stdout } = await run(['-t1', `-c${clients}`, `-d${seconds}s`, '--latency', '-s', scriptPath, url]);
  const cpuUsed = cpuPid === undefined ? 0 : cpuSeconds(cpuPid) - cpuBefore;
  if (!/50%/.test(stdout) || /Socket errors/.test(stdout) || (!expectNon2xx && /Non-2xx/.test(stdout))) {
    throw new Error(`wrk against ${url} failed:\n${stdout}`);
  }
  const calls = Number(/(\d+) requests in/.exec(stdout)![1]);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)![1]),
    p50: ms(/^\s+50%\s+(\S+)/m.exec(stdout)![1]!),
    p99: ms(/^\s+99%\s+(\S+)/m.exec(stdout)![1]!),
    ...(cpuPid === undefined ? {} : { cpuUsPerCall: (cpuUsed * 1e6) / calls }),
  };
}
