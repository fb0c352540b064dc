/**
 * Fleet mode: several ingress instances behind one public name act as one by keeping their
 * shared state (rate-limit buckets, the gate's duplicate window, in-flight counts, verdicts) in
 * one Redis. In-memory (`store: memory`) stays the default; the workers of one host
 * (`workers: N`) then share that memory through the primary process.
 *
 * The shared store is an optimisation of correctness across instances, never a single point of
 * failure: when a command fails, the caller's local fallback answers instead, the failure is
 * counted and logged (at most once per `LOG_EVERY_MS`), and the store is used again as soon as
 * it answers. Commands fail fast while disconnected (no offline queue), so a dead Redis adds no
 * latency.
 */
import cluster from 'node:cluster';
import { Redis } from 'ioredis';
import { callPrimary } from './cluster/calls.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import type { PrimaryCall, SharedState } from './plugin.js';

export interface FleetOptions {
  readonly store: 'memory' | 'redis';
  /** Without credentials inline; see config `redis_url_file` / `redis_url_env`. */
  readonly redisUrl: string | undefined;
  /** Or a Redis with replicas that Sentinel fails over (config `redis:`). */
  readonly sentinel?: SentinelOptions;
}

export interface SentinelOptions {
  readonly sentinels: ReadonlyArray<{ readonly host: string; readonly port: number }>;
  /** The master's name in the Sentinels' configuration. */
  readonly name: string;
  /** For the Redis servers and the Sentinels alike. */
  readonly password: string | undefined;
}

/** Short: a command that cannot answer within this is treated as Redis being down. */
const COMMAND_TIMEOUT_MS = 250;
const RECONNECT_MAX_MS = 2_000;
const LOG_EVERY_MS = 10_000;

export class Fleet implements SharedState {
  /** Times a local fallback answered because Redis failed; feeds /metrics. */
  fallbacks = 0;
  readonly redis: Redis | undefined;
  /** A cluster worker without Redis: the primary process holds the shared state. */
  readonly viaPrimary: boolean;
  /** When each kind of line (a connection error, a fallback) was last logged. */
  private readonly lastLogged = new Map<'connection' | 'fallback', number>();

  constructor(
    options: FleetOptions,
    private readonly log: Logger,
    private readonly metrics?: Metrics,
  ) {
    this.viaPrimary = options.store === 'memory' && cluster.isWorker;
    if (options.store !== 'redis') return;
    const common = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 1_000,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, RECONNECT_MAX_MS),
    };
    const { sentinel } = options;
    if (sentinel !== undefined) {
      // The master is asked of the Sentinels at each (re)connection; their +switch-master
      // announcement of a failover moves the client to the promoted replica at once.
      this.redis = new Redis({
        ...common,
        sentinels: sentinel.sentinels.map(({ host, port }) => ({ host, port })),
        name: sentinel.name,
        password: sentinel.password,
        sentinelPassword: sentinel.password,
        failoverDetector: true,
        sentinelRetryStrategy: (attempt: number) => Math.min(attempt * 100, RECONNECT_MAX_MS),
      });
    } else if (options.redisUrl !== undefined) {
      this.redis = new Redis(options.redisUrl, common);
    } else {
      return;
    }
    // ioredis emits 'error' on every failed reconnect; unhandled, that would crash the process.
    this.redis.on('error', (err) => this.note('connection', 'redis connection error', err));
    this.redis.on('ready', () => log.info('redis ready: shared state in use'));
  }

  get shared(): boolean {
    return this.redis !== undefined || this.viaPrimary;
  }

  home<T>(homes: { redis(client: Redis): T; primary(call: PrimaryCall): T }): T | undefined {
    if (this.redis !== undefined) return homes.redis(this.redis);
    if (this.viaPrimary) return homes.primary(callPrimary);
    return undefined;
  }

  /**
   * Runs `remote` against the shared store, or `local` when there is none or it fails. `remote`
   * must throw only for store failures (verdicts such as "rate limited" are return values).
   */
  async either<T>(what: string, remote: () => Promise<T>, local: () => T | Promise<T>): Promise<T> {
    if (!this.shared) return local();
    try {
      return await remote();
    } catch (err) {
      this.fallbacks++;
      this.metrics?.redisFallback();
      const store = this.redis !== undefined ? 'redis' : 'the primary process';
      this.note('fallback', `${store} unavailable: ${what} uses its local fallback`, err);
      return local();
    }
  }

  async close(): Promise<void> {
    if (this.redis === undefined) return;
    this.redis.disconnect();
  }

  // Throttled per kind: the reconnect errors of a Redis going down must not hide the warning that
  // shared state went local.
  private note(kind: 'connection' | 'fallback', message: string, err: unknown): void {
    const now = Date.now();
    if (now - (this.lastLogged.get(kind) ?? 0) < LOG_EVERY_MS) return;
    this.lastLogged.set(kind, now);
    // The error's code only: its message would carry Redis's address into the log.
    const code = (err as { code?: unknown } | null)?.code ?? (err instanceof Error ? err.name : 'error');
    this.log.warn(message, { fallbacks: this.fallbacks, code });
  }
}
