/**
 * local-methods: the node-local methods of spec 4.6, answered from the consensus node's local
 * API (`upstreams.node`, node-api.md) plus what this process knows.
 *
 * - `svc_getRecentCommits [since, limit]`: params checked (-32602), `limit` 64 by default and
 *   capped at 128; the newest page is shared for `newest_page_cache_ms` to absorb polling.
 * - `svc_dropStats`: the node's `driver` and `el` groups, and the `ingress` group from this
 *   process; every counter of spec 2.3 present as an integer.
 * - `svc_nodeHealth`: only with the `operator` fact (auth); the node's gauges plus the disk usage
 *   of `data_dir` measured here. Without the fact: exactly an unknown method's answer.
 * - `svc_getCheckpointChain`, `svc_getJournalTail`: only with `bootstrap_anchor: true`;
 *   otherwise exactly an unknown method's answer, given by the chain before any plugin runs
 *   (`hiddenMethods`), so that a rate limit cannot answer them differently.
 * A node that is down or slow: -32603 "node unavailable" within `upstreams.node_timeout_ms`.
 * No `upstreams.node` (beside a plain EL): every one of them answers "method not found", said
 * once at start.
 *
 * Reads: fact `operator`. Order: after allowlist and auth.
 */
import { statfs } from 'node:fs/promises';
import {
  errors,
  OPERATOR,
  RpcFailure,
  sharedFor,
  type Answer,
  type PluginMetrics,
  type PluginModule,
  type RequestContext,
  type Upstream,
  type Verdict,
} from '../src/plugin.js';

interface LocalMethodsOptions {
  readonly bootstrapAnchor: boolean;
  readonly dataDir: string | undefined;
  readonly newestPageCacheMs: number;
}

/** Spec 4.6 and 8. */
const DEFAULT_LIMIT = 64;
const MAX_LIMIT = 128;

/** Spec 2.3: every counter, by group. */
const DROP_COUNTERS = {
  driver: [
    'forced_txs_total',
    'forced_txs_dropped_total',
    'blocks_with_drops_total',
    'skip_all_dropped_total',
    'finalizer_rejected_skips_total',
    'idle_heartbeat_blocks_total',
  ],
  el: ['fee_cap_too_low', 'gas_overflow', 'insufficient_funds', 'nonce_too_high', 'nonce_too_low', 'other', 'size_overflow', 'total'],
} as const;

const NODE_LOCAL_METHODS = ['svc_getRecentCommits', 'svc_dropStats', 'svc_nodeHealth', 'svc_getCheckpointChain', 'svc_getJournalTail'];

export const localMethods: PluginModule<LocalMethodsOptions> = {
  name: 'local-methods',
  parseOptions(options) {
    const parsed = {
      bootstrapAnchor: options.boolean('bootstrap_anchor', false),
      dataDir: options.optionalString('data_dir'),
      newestPageCacheMs: options.integer('newest_page_cache_ms', 200, { min: 0, max: 5_000 }),
    };
    options.done();
    return parsed;
  },
  create({ bootstrapAnchor, dataDir, newestPageCacheMs }, { node, metrics, log }) {
    if (node === undefined) {
      // Beside a plain EL: nothing to ask. The methods are then unknown, exactly as an EL has them.
      log.warn('local-methods: no upstreams.node (the consensus node\'s local API): its methods answer "method not found"', {
        methods: NODE_LOCAL_METHODS,
      });
      return { name: 'local-methods', hiddenMethods: new Set(NODE_LOCAL_METHODS) };
    }
    const ask = (method: string, params: readonly unknown[]) => askNode(node, method, params);
    // The newest page, per limit (at most MAX_LIMIT of them): what polling clients all ask for.
    const newestPages = new Map<number, () => Promise<Answer>>();
    const recentCommits = (params: unknown): Answer | Promise<Answer> => {
      const read = readCommitParams(params);
      if ('error' in read) return read;
      if (read.since !== null) return ask('svc_getRecentCommits', [read.since, read.limit]);
      let page = newestPages.get(read.limit);
      if (page === undefined) {
        page = sharedFor(newestPageCacheMs, () => ask('svc_getRecentCommits', [null, read.limit]));
        newestPages.set(read.limit, page);
      }
      return page();
    };

    const handlers: Record<string, (ctx: RequestContext) => Answer | Promise<Answer>> = {
      svc_getRecentCommits: ({ request }) => recentCommits(request.params),
      svc_dropStats: () => dropStats(ask, metrics),
      svc_nodeHealth: ({ facts }) => (facts.get(OPERATOR) === true ? nodeHealth(ask, dataDir) : { error: errors.methodNotFound() }),
      svc_getCheckpointChain: ({ request }) =>
        bootstrapAnchor ? ask('svc_getCheckpointChain', asList(request.params)) : { error: errors.methodNotFound() },
      svc_getJournalTail: ({ request }) =>
        bootstrapAnchor ? ask('svc_getJournalTail', asList(request.params)) : { error: errors.methodNotFound() },
    };
    return {
      name: 'local-methods',
      methods: new Set(Object.keys(handlers)),
      // Not an anchor: the bootstrap methods are unknown here, before a rate limit could tell them apart.
      ...(bootstrapAnchor ? {} : { hiddenMethods: new Set(['svc_getCheckpointChain', 'svc_getJournalTail']) }),
      handle(ctx: RequestContext): Verdict | Promise<Verdict> {
        const handler = Object.hasOwn(handlers, ctx.request.method) ? handlers[ctx.request.method] : undefined;
        return handler?.(ctx);
      },
    };
  },
};

function asList(params: unknown): readonly unknown[] {
  return Array.isArray(params) ? params : [];
}

async function askNode(node: Upstream, method: string, params: readonly unknown[]): Promise<Answer> {
  try {
    return await node.call(method, params);
  } catch (err) {
    if (err instanceof RpcFailure) throw new RpcFailure(errors.nodeUnavailable(), { cause: err });
    throw err;
  }
}

function readCommitParams(params: unknown): { since: number | null; limit: number } | { error: ReturnType<typeof errors.invalidParams> } {
  const list = params === undefined ? [] : params;
  if (!Array.isArray(list) || list.length > 2) return { error: errors.invalidParams('expected [since, limit]') };
  const [since = null, limit = DEFAULT_LIMIT] = list as unknown[];
  if (since !== null && !(typeof since === 'number' && Number.isSafeInteger(since) && since >= 0)) {
    return { error: errors.invalidParams('since must be null or a non-negative integer commit index') };
  }
  if (!(typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0)) {
    return { error: errors.invalidParams('limit must be a positive integer') };
  }
  return { since, limit: Math.min(limit, MAX_LIMIT) };
}

async function dropStats(ask: (m: string, p: unknown[]) => Promise<Answer>, metrics: PluginMetrics): Promise<Answer> {
  const answer = await ask('svc_dropStats', []);
  if (!('result' in answer)) return answer;
  const node = (answer.result ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const group = (name: keyof typeof DROP_COUNTERS) =>
    Object.fromEntries(DROP_COUNTERS[name].map((key) => [key, integerOr0(node[name]?.[key])]));
  return {
    result: {
      driver: group('driver'),
      // What this process knows: what its gate sequenced. It keeps no own blocks or status
      // watchers, so those counters are zero here rather than absent.
      ingress: {
        txs_sequenced_total: metrics.sequencedTotal,
        own_blocks_gc_total: 0,
        txs_gc_dropped_total: 0,
        status_lost_total: 0,
        status_watchers: 0,
      },
      el: group('el'),
    },
  };
}

function integerOr0(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : 0;
}

async function nodeHealth(ask: (m: string, p: unknown[]) => Promise<Answer>, dataDir: string | undefined): Promise<Answer> {
  const [answer, disk] = await Promise.all([ask('svc_nodeHealth', []), dataDir === undefined ? undefined : diskUsage(dataDir)]);
  if (!('result' in answer)) return answer;
  return { result: { ...(answer.result as object), dataDirDisk: disk ?? null } };
}

async function diskUsage(path: string): Promise<{ totalBytes: number; freeBytes: number; usedBytes: number } | null> {
  try {
    const fs = await statfs(path);
    const totalBytes = fs.blocks * fs.bsize;
    const freeBytes = fs.bavail * fs.bsize;
    return { totalBytes, freeBytes, usedBytes: totalBytes - fs.bfree * fs.bsize };
  } catch {
    return null;
  }
}
