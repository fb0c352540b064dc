/** The shipped production chain (`config/ingress.yaml`) with a bench EL as every upstream, on free ports. */
import { readFileSync } from 'node:fs';

/** `edits` replace text in the shipped file (to raise a rate limit, say); each must match. */
export function productionChain(elUrl: string, edits: ReadonlyArray<readonly [string, string]> = []): string {
  process.env.SVC_BENCH_TOKEN = 'bench-operator-token-0123456789';
  let yaml = readFileSync('config/ingress.yaml', 'utf8');
  for (const [from, to] of [
    ['listen: 127.0.0.1:8545', 'listen: 127.0.0.1:0'],
    ['metrics_listen: 127.0.0.1:9100', 'metrics_listen: 127.0.0.1:0'],
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
export const UNLIMITED_READS = ['per_source: {rate_per_second: 300, burst: 600}', 'per_source: {rate_per_second: 10000000, burst: 10000000}'] as const;
/** Submission quotas likewise, per source and host-wide. */
export const UNLIMITED_SUBMISSIONS = [
  ['per_source: {rate_per_second: 10, burst: 50}', 'per_source: {rate_per_second: 10000000, burst: 10000000}'],
  ['host: {rate_per_second: 3000, burst: 6000}', 'host: {rate_per_second: 10000000, burst: 10000000}'],
] as const;

/** A bench's entry point: a failure prints and exits 1 (children are stopped by `main` itself). */
export function runBench(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
