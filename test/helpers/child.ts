/** The real `svc-ingress` command as a child process, for signals and process-level checks. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface IngressProcess {
  readonly child: ChildProcess;
  readonly configPath: string;
  readonly url: string;
  /** Every stderr line so far. */
  readonly lines: string[];
  /** Resolves with the first log line whose `msg` matches, among lines from index `from` on. */
  waitForLog(msg: string | RegExp, from?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

export function writeConfig(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-ingress-')), 'ingress.yaml');
  writeFileSync(path, yaml);
  return path;
}

/** The node flags the command's first line (`#!/usr/bin/env -S node ...`) runs it with. */
export function cliNodeFlags(): string[] {
  const shebang = readFileSync('dist/src/cli.js', 'utf8').split('\n', 1)[0]!;
  const match = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(shebang);
  if (match === null) throw new Error(`dist/src/cli.js starts with an unexpected line: ${shebang}`);
  return match[1]!.split(' ').filter(Boolean);
}

/** The command as an installed `svc-ingress` runs: its own node flags, then `nodeArgs`. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = process.env, nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...cliNodeFlags(), ...nodeArgs, 'dist/src/cli.js', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export async function startIngressProcess(yaml: string, env?: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<IngressProcess> {
  const configPath = writeConfig(yaml);
  const child = runCli(['--config', configPath], env, nodeArgs);
  const lines: string[] = [];
  const waiters: Array<{ match: string | RegExp; resolve: (entry: Record<string, unknown>) => void }> = [];
  const matches = (entry: Record<string, unknown>, match: string | RegExp) =>
    typeof match === 'string' ? entry.msg === match : match.test(String(entry.msg));
  let buffered = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      for (const waiter of [...waiters]) {
        if (matches(entry, waiter.match)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(entry);
        }
      }
    }
  });
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLog = (match: string | RegExp, from = 0) => {
    for (const line of lines.slice(from)) {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (matches(entry, match)) return Promise.resolve(entry);
      } catch {
        // not a log line
      }
    }
    // A child that exits before logging it fails the wait instead of hanging the test.
    return Promise.race([
      new Promise<Record<string, unknown>>((resolve) => waiters.push({ match, resolve })),
      exited.then((code): never => {
        throw new Error(`svc-ingress exited with ${code} before logging "${match}": ${lines.join('\n')}`);
      }),
    ]);
  };
  const listening = await waitForLog('listening');
  return { child, configPath, url: String(listening.url), lines, waitForLog, exited };
}
