/**
 * `workers: N`: the primary process forks N workers that serve the one public port (node:cluster
 * hands each new connection to the next worker), and
 * - hosts the state the workers share (each plugin's `shared` services), so rate limits, the
 *   duplicate window, in-flight counts and verdicts hold across workers without Redis;
 * - serves `metrics_listen` itself, with the workers' metrics summed (prom-client's
 *   AggregatorRegistry) and its own probes of the EL;
 * - restarts a worker that dies, passes SIGHUP on once the file validates (each worker reloads
 *   it), and on SIGTERM drains every worker before it exits.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { IngressConfig } from '../config/load.js';
import { announceOperatorListener } from '../ingress.js';
import type { Logger } from '../log.js';
import { headOf, startProbeServer, type ProbeServer } from '../probes.js';
import { PLUGINS } from '../registry.js';
import { Upstream } from '../upstream.js';
import { hostService } from './calls.js';

const RESTART_DELAY_MS = 1_000;
/**
 * The primary asks a worker to drain by message, not by signal: a signal that reaches a worker
 * already tearing down after its own drain (its handlers gone) would kill it instead.
 */
export const STOP_MESSAGE = 'svc-ingress:stop';

export interface PrimaryControl {
  /** Reads the file again: the new config, or undefined (logged) when it is invalid. */
  readAgain(): IngressConfig | undefined;
  /** Sets what SIGHUP does once the workers are up. */
  onReload(handler: () => void): void;
  /** Resolves with the signal that asked the primary to stop. */
  readonly stopped: Promise<string>;
}

export async function runPrimary(config: IngressConfig, log: Logger, control: PrimaryControl): Promise<number> {
  cluster.setupPrimary({ serialization: 'advanced' });
  for (const plugin of PLUGINS.values()) {
    for (const [service, build] of Object.entries(plugin.shared ?? {})) hostService(service, build);
  }

  let stopping = false;
  const fork = () => cluster.fork();
  const started = new Promise<void>((resolve, reject) => {
    let listening = 0;
    cluster.on('listening', (_worker: Worker, address) => {
      if (++listening !== config.workers) return;
      const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
      log.info('listening', { url: `http://${host}:${address.port}`, workers: config.workers, primary: process.pid });
      resolve();
    });
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return;
      if (listening < config.workers) return reject(new Error(`worker ${worker.id} exited (${signal ?? code}) before listening`));
      log.error('worker died: starting another', { worker: worker.id, code, signal });
      // Not unref'd: with every worker gone, this timer is what keeps the primary alive.
      setTimeout(() => stopping || fork(), RESTART_DELAY_MS);
    });
  });
  for (let i = 0; i < config.workers; i++) fork();
  const stopAll = async () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const codes = await Promise.all(
      workers.map(
        (worker) =>
          new Promise<number | null>((resolve) => {
            if (worker.isDead()) return resolve(worker.process.exitCode);
            worker.once('exit', (code) => resolve(code));
            // A worker no longer connected is already on its way out.
            if (worker.isConnected()) worker.send({ channel: STOP_MESSAGE }, () => {});
          }),
      ),
    );
    return codes.every((code) => code === 0) ? 0 : 1;
  };

  try {
    await started;
  } catch (err) {
    log.error('start failed', { reason: (err as Error).message });
    await stopAll();
    return 1;
  }
  const operator = await startOperatorListener(config, log);

  control.onReload(() => {
    const next = control.readAgain();
    if (next === undefined) return;
    if (next.workers !== config.workers) log.warn('workers changes take effect only after a restart', { workers: config.workers });
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGHUP');
  });
  const signal = await control.stopped;
  log.info('stopping: draining every worker', { signal });
  const code = await stopAll();
  await operator?.close();
  return code;
}

async function startOperatorListener(config: IngressConfig, log: Logger): Promise<ProbeServer | undefined> {
  if (config.metricsListen === undefined) {
    log.info('no metrics_listen: /metrics and the health probes are not served');
    return undefined;
  }
  const aggregator = new AggregatorRegistry();
  const execution = new Upstream(config.upstreams.execution);
  const node = config.upstreams.node === undefined ? undefined : new Upstream(config.upstreams.node);
  const probes = await startProbeServer(
    config.metricsListen.host,
    config.metricsListen.port,
    {
      ownMetrics: async () => ({ text: await aggregator.clusterMetrics(), contentType: aggregator.contentType }),
      elHead: () => headOf(execution),
      nodeMetrics: async () => node?.call('svc_metrics', []),
    },
    log,
    config.readinessHeadAgeMs,
  );
  announceOperatorListener(probes.url, config.metricsListen.host, log);
  return {
    url: probes.url,
    close: async () => {
      await probes.close();
      await Promise.all([execution.close(), node?.close()]);
    },
  };
}
