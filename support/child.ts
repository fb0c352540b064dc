/** Child processes: the real `svc-ingress` command (signals, process-level checks), the example scripts, cast. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { scratchDir } from './scratch.js';

export interface IngressProcess {
  readonly child: ChildProcess;
  readonly configPath: string;
  readonly url: string;
  /** Every stderr line so far. */
  readonly lines: string[];
  /** Resolves with the first log line whose `msg` matches, among lines from index `from` on. */
  waitForLog(msg: string | RegExp, from?: number): Promise<Record<string, unknown>>;
  /** Resolves with the first `count` log lines whose `msg` matches (one per worker, say). */
  waitForLogs(msg: string | RegExp, count: number): Promise<Array<Record<string, unknown>>>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** The cast binary of the `@foundry-rs/cast-linux-amd64` package (its wrapper package breaks `npm ci`). */
export const CAST_BIN = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');

export function writeConfig(yaml: string): string {
  const path = join(scratchDir('svc-ingress'), 'ingress.yaml');
  writeFileSync(path, yaml);
  return path;
}

let flags: string[] | undefined;

/** The node flags the command's first line (`#!/usr/bin/env -S node ...`) runs it with. */
export function cliNodeFlags(): string[] {
  if (flags !== undefined) return flags;
  const shebang = readFileSync('dist/src/cli.js', 'utf8').split('\n', 1)[0]!;
  const match = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(shebang);
  if (match === null) throw new Error(`dist/src/cli.js starts with an unexpected line: ${shebang}`);
  flags = match[1]!.split(' ').filter(Boolean);
  return flags;
}

/** The command as an installed `svc-ingress` runs: its own node flags, then `nodeArgs`. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = process.env, nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...cliNodeFlags(), ...nodeArgs, 'dist/src/cli.js', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Runs a compiled script under dist/ (an example, a bench) with `env` added, to its exit: its code
 * and its stdout and stderr. Killed after `timeoutMs`, so that a hung script cannot outlive its
 * test.
 */
export async function runScript(
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
  args: readonly string[] = [],
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [`dist/${script}`, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // 'close', not 'exit': the script's last lines are read by then.
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, out };
}

export async function startIngressProcess(yaml: string, env?: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<IngressProcess> {
  const configPath = writeConfig(yaml);
  return followIngress(runCli(['--config', configPath], env, nodeArgs), configPath);
}

type Entry = Record<string, unknown>;

/** Follows a started svc-ingress (stderr piped) until it logs "listening". */
export async function followIngress(child: ChildProcess, configPath: string): Promise<IngressProcess> {
  const lines: string[] = [];
  const entries: Array<Entry | undefined> = [];
  const waiters: Array<{ match: string | RegExp; from: number; resolve: (found: { entry: Entry; index: number }) => void }> = [];
  const matches = (entry: Entry | undefined, match: string | RegExp) =>
    entry !== undefined && (typeof match === 'string' ? entry.msg === match : match.test(String(entry.msg)));
  let buffered = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const index = lines.push(line) - 1;
      let entry: Entry | undefined;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        // not a log line
      }
      entries.push(entry);
      for (const waiter of [...waiters]) {
        if (index >= waiter.from && matches(entry, waiter.match)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve({ entry: entry!, index });
        }
      }
    }
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLine = (match: string | RegExp, from: number): Promise<{ entry: Entry; index: number }> => {
    const index = entries.findIndex((entry, i) => i >= from && matches(entry, match));
    if (index >= 0) return Promise.resolve({ entry: entries[index]!, index });
    // A child that exits before logging it fails the wait instead of hanging the test.
    return Promise.race([
      new Promise<{ entry: Entry; index: number }>((resolve) => waiters.push({ match, from, resolve })),
      exited.then((code): never => {
        throw new Error(`svc-ingress exited with ${code} before logging "${match}": ${lines.join('\n')}`);
      }),
    ]);
  };
  const waitForLog = async (match: string | RegExp, from = 0) => (await waitForLine(match, from)).entry;
  const waitForLogs = async (match: string | RegExp, count: number) => {
    const found: Entry[] = [];
    for (let from = 0; found.length < count; ) {
      const { entry, index } = await waitForLine(match, from);
      found.push(entry);
      from = index + 1;
    }
    return found;
  };
  const listening = await waitForLog('listening');
  return { child, configPath, url: String(listening.url), lines, waitForLog, waitForLogs, exited };
}
