/**
 * The ingress's own metrics (prom-client), one set per process so that they survive reloads.
 * Label values come from closed sets only: methods outside the known surface are "other",
 * refusal reasons are the gate's fixed codes, plugins are registry names. Plugins declare their
 * own series through `counter` (the PluginMetrics face of this class).
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { CacheCounts } from './cache/answer-cache.js';
import { BatchedCounter, type CounterSeries } from './batched-counter.js';
import { DurationHistogram } from './duration-histogram.js';
import { KNOWN_METHODS } from './methods.js';
import type { LabelledCounter, PluginMetrics } from './plugin.js';

const NO_CACHE: CacheCounts = { hits: 0, misses: 0, evictions: 0, bytes: 0, entries: 0 };

/** `abandoned`: the client left before the ingress had an answer for it. */
export type Outcome = 'proxied' | 'answered' | 'refused' | 'error' | 'abandoned';
const OUTCOMES: readonly Outcome[] = ['proxied', 'answered', 'refused', 'error', 'abandoned'];

/** A method label's series, found with one lookup per request. */
interface MethodSeries {
  readonly outcomes: Readonly<Record<Outcome, CounterSeries>>;
  readonly duration: { observe(seconds: number): void };
}

export class Metrics implements PluginMetrics {
  readonly registry = new Registry();
  private readonly declared = new Map<string, { readonly shape: string; readonly counter: BatchedCounter<string> }>();
  private sequencedCount = 0;
  /** Known methods' series by name; every other method shares `otherSeries`. */
  private readonly methodSeries = new Map<string, MethodSeries>();
  private otherSeries: MethodSeries | undefined;

  private readonly requests = new BatchedCounter(
    'svc_ingress_requests_total',
    'JSON-RPC requests by method and outcome (proxied to the EL, answered, refused, error, abandoned: the client left first).',
    ['method', 'outcome'],
    this.registry,
  );
  private readonly duration = new DurationHistogram(
    'svc_ingress_request_duration_seconds',
    'Time from the request body to the end of the answer, by method.',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    'method',
    this.registry,
  );
  private readonly refusals = new BatchedCounter(
    'svc_ingress_refusals_total',
    'Error answers by the plugin that gave them and the JSON-RPC code.',
    ['plugin', 'code'],
    this.registry,
  );
  // Floods of refusals are the point of these two: counted like the other refusal paths.
  private readonly transportRefusals = new BatchedCounter(
    'svc_ingress_transport_refusals_total',
    'Requests refused at the HTTP level before any JSON-RPC method was read, by reason (405 method_not_allowed, 413 payload_too_large, websocket, ...).',
    ['reason'],
    this.registry,
  );
  private readonly bodyRefusals = new BatchedCounter(
    'svc_ingress_body_refusals_total',
    'POST bodies refused before a method was known: batch (a JSON array), parse_error (not JSON), invalid_request (not a JSON-RPC request).',
    ['reason'],
    this.registry,
  );
  private readonly webSocketCloses = new BatchedCounter(
    'svc_ingress_websocket_closed_total',
    'WebSocket connections the ingress closed, by reason: slow_consumer (answers unsent past the bound), ping_timeout, too_large (a message over the body cap), shutdown.',
    ['reason'],
    this.registry,
  );
  private readonly notifications = new Counter({
    name: 'svc_ingress_websocket_notifications_total',
    help: 'Subscription notifications owed over WebSocket (eth_subscription messages), counted as each is queued to its connection.',
    registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: 'svc_ingress_upstream_errors_total',
    help: 'Upstream calls that failed: unavailable (unreachable, timed out) or invalid (not a JSON-RPC answer).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly sequencedTxs = new Counter({
    name: 'svc_ingress_txs_sequenced_total',
    help: 'Transactions admitted by the gate and acknowledged by the submission target (svc_dropStats ingress.txs_sequenced_total).',
    registers: [this.registry],
  });
  private readonly fallbacks = new Counter({
    name: 'svc_ingress_redis_fallbacks_total',
    help: 'Times a local fallback answered because the shared store failed (Redis in fleet mode, or the primary process with workers).',
    registers: [this.registry],
  });
  /** Added to on every streamed answer: counted as a plain number, handed over at scrape. */
  private readonly streamed = new BatchedCounter(
    'svc_ingress_streamed_bytes_total',
    'Bytes of EL answers streamed to clients (as declared by the EL).',
    [],
    this.registry,
  ).series();

  /** Reads the requests in flight at scrape time (set by the ingress that owns the listener). */
  inFlight: () => number = () => 0;
  /** Reads the declared body bytes being received at scrape time (set by the request listener). */
  bodyBytesInFlight: () => number = () => 0;
  /** Reads the WebSocket connections and subscriptions open at scrape time (set by the ingress). */
  webSockets: () => { readonly connections: number; readonly subscriptions: number } = () => ({ connections: 0, subscriptions: 0 });
  /** Reads the gas-heavy reads waiting for an EL turn, and running per lane, at scrape time (set by the request listener). */
  elCalls: () => { readonly waiting: number; readonly quick: number; readonly heavy: number; readonly sources: number } = () => ({
    waiting: 0,
    quick: 0,
    heavy: 0,
    sources: 0,
  });

  /** Reads the answer cache's counts at scrape time (set by the ingress); undefined: no cache. */
  cache: () => CacheCounts | undefined = () => undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_ingress_' });
    const cache = () => this.cache();
    for (const [name, help, read] of [
      ['svc_ingress_cache_hits_total', 'Reads answered from the answer cache.', (c: CacheCounts) => c.hits],
      ['svc_ingress_cache_misses_total', 'Cacheable reads the cache did not hold, asked of the EL.', (c: CacheCounts) => c.misses],
      [
        'svc_ingress_cache_evictions_total',
        'Answers dropped from the cache to stay within cache.max_bytes.',
        (c: CacheCounts) => c.evictions,
      ],
    ] as const) {
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(read(cache() ?? NO_CACHE));
        },
      });
    }
    this.gauge(
      'svc_ingress_cache_bytes',
      'Bytes the answer cache holds (counted as two per character), at most cache.max_bytes.',
      () => (cache() ?? NO_CACHE).bytes,
    );
    this.gauge('svc_ingress_cache_entries', 'Answers the answer cache holds.', () => (cache() ?? NO_CACHE).entries);
    this.gauge('svc_ingress_requests_in_flight', 'Requests received and not yet answered (or cut).', () => this.inFlight());
    this.gauge(
      'svc_ingress_body_bytes_in_flight',
      'Declared request-body bytes being received, charged against max_body_bytes_in_flight.',
      () => this.bodyBytesInFlight(),
    );
    this.gauge(
      'svc_ingress_el_calls_waiting',
      'eth_call, eth_estimateGas, eth_createAccessList and eth_simulateV1 waiting for a turn on the EL.',
      () => this.elCalls().waiting,
    );
    this.gauge(
      'svc_ingress_el_sources',
      'Sources the gas-heavy reads are shared between now: with calls waiting or running, or EL time owed ahead of the scheduler clock.',
      () => this.elCalls().sources,
    );
    this.gauge('svc_ingress_websocket_connections', 'WebSocket connections open.', () => this.webSockets().connections);
    this.gauge(
      'svc_ingress_websocket_subscriptions',
      'eth_subscribe subscriptions open over WebSocket.',
      () => this.webSockets().subscriptions,
    );
    const elCalls = () => this.elCalls();
    new Gauge({
      name: 'svc_ingress_el_calls_running',
      help: 'Gas-heavy reads running on the EL, by lane (quick: expected short; heavy: any).',
      labelNames: ['lane'],
      registers: [this.registry],
      collect() {
        const { quick, heavy } = elCalls();
        this.set({ lane: 'quick' }, quick);
        this.set({ lane: 'heavy' }, heavy);
      },
    });
  }

  /** A gauge read at scrape time. */
  private gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** The method as a label value: a known method's name, or "other". */
  label(method: string): string {
    return KNOWN_METHODS.has(method) ? method : 'other';
  }

  request(method: string, outcome: Outcome, seconds: number): void {
    const series = this.methodSeries.get(method) ?? this.seriesOf(method);
    series.outcomes[outcome].count++;
    series.duration.observe(seconds);
  }

  private seriesOf(method: string): MethodSeries {
    const label = this.label(method);
    if (label === 'other' && this.otherSeries !== undefined) return this.otherSeries;
    const outcomes = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, this.requests.series(label, outcome)]));
    const series = { outcomes: outcomes as Record<Outcome, CounterSeries>, duration: this.duration.child(label) };
    if (label === 'other') this.otherSeries = series;
    else this.methodSeries.set(method, series);
    return series;
  }

  refused(plugin: string, code: number): void {
    this.refusals.inc(plugin, String(code));
  }

  webSocketClosed(reason: 'slow_consumer' | 'ping_timeout' | 'too_large' | 'shutdown'): void {
    this.webSocketCloses.inc(reason);
  }

  notificationSent(count = 1): void {
    this.notifications.inc(count);
  }

  transportRefused(reason: string): void {
    this.transportRefusals.inc(reason);
  }

  bodyRefused(reason: 'batch' | 'parse_error' | 'invalid_request'): void {
    this.bodyRefusals.inc(reason);
  }

  upstreamError(kind: 'unavailable' | 'invalid'): void {
    this.upstreamErrors.inc({ kind });
  }

  counter(name: string, help: string, labelNames: readonly string[]): LabelledCounter {
    if (!name.startsWith('svc_ingress_')) throw new Error(`metric ${name} must start with svc_ingress_`);
    const shape = JSON.stringify([help, labelNames]);
    const known = this.declared.get(name);
    if (known !== undefined) {
      if (known.shape !== shape) throw new Error(`metric ${name} is already declared with other help or labels`);
      return known.counter;
    }
    const counter = new BatchedCounter(name, help, labelNames, this.registry);
    this.declared.set(name, { shape, counter });
    return counter;
  }

  sequenced(): void {
    this.sequencedCount++;
    this.sequencedTxs.inc();
  }

  get sequencedTotal(): number {
    return this.sequencedCount;
  }

  redisFallback(): void {
    this.fallbacks.inc();
  }

  streamedBytes(bytes: number): void {
    this.streamed.count += bytes;
  }
}
