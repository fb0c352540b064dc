/**
 * The operator listener (`metrics_listen`, spec 4.7): Prometheus metrics and health probes,
 * meant to be bound to localhost and scraped locally.
 *
 * - `GET /metrics`: the ingress's own metrics, plus the node's gauges (spec 4.7 table) read from
 *   its `svc_metrics` at scrape time. A gauge the node does not report is left out, not zero.
 * - `GET /livez`: 200 while the process answers: what an orchestrator restarts on (issue 37).
 * - `GET /readyz`: the EL answers a local `eth_blockNumber` (spec 4.7's liveness, of the node)
 *   and its head advanced within `readiness_head_age_ms`; else 503 with the reason. Spec 4.7 says "the head has advanced since the last probe"; read per prober that
 *   flaps (two probers a second apart, or a fast prober on a one-block-a-second chain, see an
 *   unchanged head), and an idle healthy chain closes a block only once per 1,200 blockless
 *   commits. So the ingress remembers itself when it last saw the head move, whoever probed,
 *   and the window is one idle heartbeat: a head older than that has stopped, as the spec means.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, Registry } from 'prom-client';
import type { Answer } from './jsonrpc.js';
import type { Logger } from './log.js';
import type { Upstream } from './upstream.js';

/** Spec 4.7: the node's gauges, exported as `svc_<name>`. */
const NODE_GAUGES: Record<string, string> = {
  checkpoint_lag_commits: 'Commits folded past the latest certified checkpoint.',
  checkpoint_freshness_alarms_total: 'Freshness alarms raised; rising means certification is falling behind.',
  retention_target_floor: 'The commit the pruner is currently cutting to.',
  retention_disk_guard_active: '1 while the disk guard has collapsed the commit floor.',
  retention_disk_free_bytes: "Free space on the consensus store's filesystem as the guard sees it.",
  observer_stranded: '1 when a follower has no usable peer ahead of it and must re-bootstrap.',
  follower_stalled_seconds: "Seconds a follower's handled commit index has not advanced.",
  archive_cert_gap_sequences: 'Checkpoint sequences skipped for missing interior certificates when export was enabled.',
  block_key_rotations_applied_total: 'Root-certified block-key rotations applied to the schedule.',
};

export interface ProbeSources {
  /** The ingress's own metrics in the exposition format (one process's, or the workers' summed). */
  ownMetrics(): Promise<{ readonly text: string; readonly contentType: string }>;
  /** The EL's head number; throws when the EL cannot answer. */
  elHead(): Promise<bigint>;
  /** The node's `svc_metrics` answer, or undefined when no node is configured. */
  nodeMetrics(): Promise<Answer | undefined>;
}

/** The EL's head number by a local `eth_blockNumber`; throws when the EL cannot answer. */
export async function headOf(execution: Upstream): Promise<bigint> {
  const answer = await execution.call('eth_blockNumber', []);
  if (!('result' in answer) || typeof answer.result !== 'string') throw new Error('no block number');
  return BigInt(answer.result);
}

export interface ProbeServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startProbeServer(
  host: string,
  port: number,
  sources: ProbeSources,
  log: Logger,
  readinessHeadAgeMs: number,
): Promise<ProbeServer> {
  // The head as last seen, and when it was first seen at that height (start counts as a move).
  let seen: { head: bigint | undefined; since: number } = { head: undefined, since: Date.now() };
  const observe = (head: bigint) => {
    if (seen.head === undefined || head > seen.head) seen = { head, since: Date.now() };
  };
  sources.elHead().then(observe, () => {});

  const text = (status: number, body: string, type = 'text/plain; charset=utf-8') => ({ status, body, type });
  const routes: Record<string, () => Promise<{ status: number; body: string; type: string }>> = {
    '/metrics': async () => {
      const own = await sources.ownMetrics();
      return text(200, own.text + (await nodeGauges(sources, log)), own.contentType);
    },
    // The process alone: an EL that is down is for /readyz to say (a liveness probe that failed
    // with it would have an orchestrator restart an ingress that is fine).
    '/livez': async () => text(200, 'ok\n'),
    '/readyz': async () => {
      try {
        observe(await sources.elHead());
      } catch {
        return text(503, 'execution layer unreachable\n');
      }
      const age = Date.now() - seen.since;
      if (age > readinessHeadAgeMs) return text(503, `head has not advanced for ${Math.round(age / 1000)} s (${seen.head})\n`);
      return text(200, 'ok\n');
    },
  };

  const server: Server = createServer((req, res) => {
    const route = req.method === 'GET' ? routes[(req.url ?? '').split('?')[0]!] : undefined;
    if (route === undefined) {
      res.writeHead(req.method === 'GET' ? 404 : 405, { 'content-type': 'text/plain' }).end();
      return;
    }
    route().then(
      ({ status, body, type }) => res.writeHead(status, { 'content-type': type }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The node's gauges in the exposition format, or nothing when the node does not answer. */
async function nodeGauges(sources: ProbeSources, log: Logger): Promise<string> {
  let answer: Answer | undefined;
  try {
    answer = await sources.nodeMetrics();
  } catch {
    answer = undefined;
  }
  if (answer === undefined) return '';
  if (!('result' in answer) || answer.result === null || typeof answer.result !== 'object') {
    log.debug('node gauges unavailable for this scrape');
    return '';
  }
  const node = new Registry();
  for (const [name, value] of Object.entries(answer.result as Record<string, unknown>)) {
    const help = NODE_GAUGES[name];
    if (help === undefined || typeof value !== 'number' || !Number.isFinite(value)) continue;
    new Gauge({ name: `svc_${name}`, help, registers: [node] }).set(value);
  }
  return node.metrics();
}
