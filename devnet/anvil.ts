/**
 * A real anvil EL, configured as chain 8141 (spec section 1 network parameters), for the
 * devnet and the tests. Binary from the `@foundry-rs/anvil-linux-amd64` package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CHAIN } from '../protocol/index.js';
import { rpcClient } from './rpc.js';

const require = createRequire(import.meta.url);
export const ANVIL_BIN = join(dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');

/** The chain's (protocol/chain.ts): spec section 1. */
export const CHAIN_ID = Number(CHAIN.chainId);
export const BLOCK_GAS_LIMIT = Number(CHAIN.blockGasLimit);
const START_TIMEOUT_MS = 15_000;

export interface AnvilOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Seconds per block; absent mines one block per transaction. */
  readonly blockTimeSeconds?: number;
  readonly extraArgs?: readonly string[];
}

export interface Anvil {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Stops anvil and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * What chain 8141 has from its first block: the expiry verifier EIP-8141 installs at activation
 * (its code at 0x…8141). Put in place with `anvil_setCode`, as a stock EL's genesis would.
 */
async function installPredeploys(url: string): Promise<void> {
  await rpcClient(url)('anvil_setCode', [CHAIN.expiryVerifier, CHAIN.expiryVerifierCode]);
}

export function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(CHAIN_ID),
    '--gas-limit',
    String(BLOCK_GAS_LIMIT),
    '--order',
    'fifo',
    ...(options.blockTimeSeconds !== undefined ? ['--block-time', String(options.blockTimeSeconds)] : []),
    ...(options.extraArgs ?? []),
  ];
  const child = spawn(ANVIL_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`anvil did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      void stop();
      reject(err);
    };
    const onEarlyExit = (code: number | null) => fail(new Error(`anvil exited with ${code} before listening: ${output.slice(-500)}`));
    const onStderr = (chunk: Buffer) => (output += chunk.toString());
    child.once('error', fail);
    child.once('exit', onEarlyExit);
    child.stderr!.on('data', onStderr);
    child.stdout!.on('data', function onData(chunk: Buffer) {
      output += chunk.toString();
      const match = /Listening on ([\d.]+):(\d+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.off('exit', onEarlyExit);
      // From here on anvil's output is not kept: it would grow for as long as anvil runs.
      child.stdout!.off('data', onData).resume();
      child.stderr!.off('data', onStderr).resume();
      output = '';
      const port = Number(match[2]);
      const url = `http://${match[1]}:${port}`;
      installPredeploys(url).then(
        () => resolve({ url, port, child, stop }),
        (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
      );
    });
  });
}
