#!/usr/bin/env -S node --max-semi-space-size=32
/**
 * `svc-ingress --config FILE`: runs the ingress from a YAML file.
 * SIGHUP reloads the file (an invalid file keeps the running chain and logs why); SIGTERM and
 * SIGINT stop accepting, drain in-flight requests, then exit. With `workers: N` above 1 this
 * process becomes the cluster's primary (src/cluster/primary.ts) and each worker runs this file
 * again (with the same node flags).
 *
 * The node flag on the first line: V8's young generation is otherwise capped at 16 MiB per
 * semi-space, and with a few hundred requests in flight their objects outlive it, get promoted
 * and need full collections: at 256 keep-alive clients that cost 4-18 µs of collection per call,
 * against ~2 µs with 32 MiB (docs/decisions/0006). Tests and benches start the process with the
 * same flags (support/child.ts reads them from this line).
 */
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { AggregatorRegistry } from 'prom-client';
import { runPrimary, STOP_MESSAGE } from './cluster/primary.js';
import { loadConfigFile, type IngressConfig } from './config/load.js';
import { ConfigError } from './config/reader.js';
import { startIngress } from './ingress.js';
import { createLogger, describeError } from './log.js';
import { Metrics } from './metrics.js';

const USAGE = 'usage: svc-ingress --config FILE';

/** What goes wrong before the configuration names a log level: said in the same JSON lines as the rest. */
const startLog = createLogger('error');

async function main(): Promise<number> {
  let configPath: string | undefined;
  try {
    const { values } = parseArgs({ options: { config: { type: 'string' }, help: { type: 'boolean' } } });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    configPath = values.config;
  } catch (err) {
    startLog.error(USAGE, { reason: (err as Error).message });
    return 2;
  }
  if (configPath === undefined) {
    startLog.error(USAGE, { reason: 'no --config given' });
    return 2;
  }
  const path = configPath;
  let config: IngressConfig;
  try {
    config = loadConfigFile(path);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    startLog.error('invalid configuration', { path, reason: err.message });
    return 2;
  }
  const log = createLogger(config.logLevel);
  // Signal handlers go in before anything is announced: a SIGHUP that arrives before Node has a
  // listener for it takes the default action and kills the process.
  let reload: (() => void) | undefined;
  let stopRequested: ((signal: string) => void) | undefined;
  const stopped = new Promise<string>((resolve) => (stopRequested = resolve));
  process.on('SIGHUP', () => (reload === undefined ? log.warn('reload ignored: still starting') : reload()));
  // A worker may be signalled by a supervisor and told by the primary too: the second word must
  // not kill it mid-drain. Elsewhere a second signal ends the process at once.
  const onStop = cluster.isWorker ? process.on.bind(process) : process.once.bind(process);
  onStop('SIGTERM', () => stopRequested!('SIGTERM'));
  onStop('SIGINT', () => stopRequested!('SIGINT'));
  if (cluster.isWorker)
    process.on('message', (message: { channel?: unknown } | null) => message?.channel === STOP_MESSAGE && stopRequested!('SIGTERM'));
  const readAgain = (): IngressConfig | undefined => {
    try {
      return loadConfigFile(path);
    } catch (err) {
      log.error('reload refused: keeping the running configuration', { reason: (err as Error).message });
      return undefined;
    }
  };

  if (config.workers > 1 && cluster.isPrimary) {
    return runPrimary(config, log, { readAgain, onReload: (handler) => (reload = handler), stopped });
  }
  const metrics = new Metrics();
  if (cluster.isWorker) {
    // A worker answers the primary's scrapes with this registry; prom-client installs that
    // answering listener when an AggregatorRegistry is constructed.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([metrics.registry]);
  }
  const ingress = await startIngress(config, log, metrics, { operatorListener: !cluster.isWorker });
  reload = () => {
    const next = readAgain();
    if (next === undefined) return;
    ingress.reload(next).catch((err) => log.error('reload failed: keeping the running configuration', describeError(err)));
  };
  const plugins = config.plugins.map((p) => p.module.name);
  if (cluster.isWorker) log.info('worker listening', { url: ingress.url, worker: cluster.worker!.id, pid: process.pid, plugins });
  else log.info('listening', { url: ingress.url, plugins });
  const signal = await stopped;
  log.info('stopping: draining in-flight requests', { signal });
  let code = 0;
  try {
    await ingress.shutdown();
  } catch (err) {
    log.error('shutdown failed', describeError(err));
    code = 1;
  }
  // The IPC channel to the primary would keep a drained worker alive.
  if (cluster.isWorker) cluster.worker!.disconnect();
  return code;
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    startLog.error('failed to start', describeError(err));
    process.exitCode = 1;
    // A worker that failed to start must exit, not linger on its channel to the primary.
    if (cluster.isWorker) cluster.worker!.disconnect();
  },
);
