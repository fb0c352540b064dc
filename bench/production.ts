/** The shipped production chain (`config/ingress.yaml`) with a bench EL as every upstream, on free ports. */
import { readFileSync } from 'node:fs';
import { startIngressProcess, type IngressProcess } from '../support/child.js';

/** `edits` replace text in the shipped file (to raise a rate limit, say); each must match. */
export function productionChain(elUrl: string, edits: ReadonlyArray<readonly [string, string]> = []): string {
  process.env.SVC_BENCH_TOKEN = 'bench-operator-token-0123456789';
  let yaml = readFileSync('config/ingress.yaml', 'utf8');
  for (const [from, to] of [
    ['listen: 127.0.0.1:8545', 'listen: 127.0.0.1:0'],
    ['metrics_listen: 127.0.0.1:9645', 'metrics_listen: 127.0.0.1:0'],
    ['execution: http://127.0.0.1:18545', `execution: ${elUrl}`],
    // No consensus node on the bench: the EL takes the submissions.
    ['submit: http://127.0.0.1:9651', `submit: ${elUrl}`],
    ['token_file: /etc/svc-ingress/operator-token', 'token_env: SVC_BENCH_TOKEN'],
    ...edits,
  ] as const) {
    if (!yaml.includes(from)) throw new Error(`config/ingress.yaml no longer contains "${from}"`);
    yaml = yaml.replace(from, to);
  }
  return yaml;
}

/** Read quotas far above what one bench machine can send. */
export const UNLIMITED_READS = [
  'per_source: {rate_per_second: 300, burst: 600}',
  'per_source: {rate_per_second: 10000000, burst: 10000000}',
] as const;
/**
 * wrk's clients all come from one address: the per-source connection cap (156 by default) would
 * close most of 256 on accept, and the per-source in-flight caps (32, 2 gas-heavy reads) refuse
 * most of their requests. Raised for load from one machine; the EL lanes stay as shipped.
 */
export const ONE_ADDRESS_LOAD = [
  ['# max_connections_per_source: 156', 'max_connections_per_source: 10000'],
  ['max_in_flight_per_source: 32', 'max_in_flight_per_source: 10000'],
  ['max_heavy_in_flight_per_source: 2', 'max_heavy_in_flight_per_source: 10000'],
] as const;
/** Submission quotas likewise, per source and host-wide. */
export const UNLIMITED_SUBMISSIONS = [
  ['per_source: {rate_per_second: 10, burst: 50}', 'per_source: {rate_per_second: 10000000, burst: 10000000}'],
  ['host: {rate_per_second: 3000, burst: 6000}', 'host: {rate_per_second: 10000000, burst: 10000000}'],
] as const;

/** The read cache off (`cache.max_bytes: 0`): nothing kept or shared, the forwarding path alone. */
export const NO_READ_CACHE = ['  max_bytes: 67108864', '  max_bytes: 0'] as const;

/** `yaml` (a production configuration) with `allowlist` as its only plugin. */
export function allowlistOnly(yaml: string): string {
  return `${yaml.slice(0, yaml.indexOf('\nplugins:'))}\nplugins:\n  - allowlist\n`;
}

const DEV = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** The reads the read benches send, by method: their params. */
export const BENCH_READS: Readonly<Record<string, readonly unknown[]>> = {
  eth_chainId: [],
  eth_blockNumber: [],
  eth_getBalance: [DEV, 'latest'],
  eth_call: [{ to: DEV, data: '0x' }, 'latest'],
};

/** Registers how to stop something a bench started; run last-first however the bench ends. */
export type StopLater = (stop: () => unknown) => void;

/**
 * A bench's entry point. `main` registers what it starts with `stopLater`; all of it is stopped
 * when main ends, fails, misses `deadlineMs` (a bench that hangs fails rather than holding its
 * processes forever), or the bench is interrupted (Ctrl-C, SIGTERM). A failure prints and exits 1.
 */
export function runBench(main: (stopLater: StopLater) => Promise<void>, deadlineMs = 30 * 60_000): void {
  const stops: Array<() => unknown> = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench: no result within ${deadlineMs / 1000} s`)), deadlineMs);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => reject(new Error(`bench: interrupted (${signal})`)));
  });
  Promise.race([main((stop) => void stops.push(stop)), deadline])
    .then(
      () => 0,
      (err: unknown) => {
        console.error(err);
        return 1;
      },
    )
    .then(async (code) => {
      clearTimeout(timer);
      for (const stop of stops.reverse()) {
        try {
          await stop();
        } catch (err) {
          console.error('bench: stopping failed:', err);
        }
      }
      process.exit(code);
    });
}

/** An ingress process started by a bench, stopped (SIGTERM, then its exit awaited) at the end. */
export async function benchIngress(stopLater: StopLater, yaml: string, nodeArgs: string[] = []): Promise<IngressProcess> {
  const ingress = await startIngressProcess(yaml, undefined, nodeArgs);
  stopLater(() => stopIngress(ingress));
  return ingress;
}

/** Stops an ingress process now; stopping it again later is harmless. */
export async function stopIngress(ingress: IngressProcess): Promise<void> {
  if (ingress.child.exitCode === null && ingress.child.signalCode === null) ingress.child.kill('SIGTERM');
  await ingress.exited;
}
