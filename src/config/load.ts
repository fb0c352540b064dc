/**
 * The ingress configuration: one YAML file, validated whole at start and on reload, then frozen.
 * Every complaint names its YAML path; unknown keys are refused everywhere.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parse as parseYaml } from 'yaml';
import type { ChainEntry } from '../chain.js';
import { LOG_LEVELS, type LogLevel } from '../log.js';
import { orderViolation, PLUGINS } from '../registry.js';
import type { UpstreamOptions } from '../upstream.js';
import type { FleetOptions, SentinelOptions } from '../fleet.js';
import { ConfigError, OptionsReader } from './reader.js';
import { readSecret } from './secret.js';

/** The largest request body any configuration accepts (size-limit may lower it). */
export const MAX_BODY_CAP_BYTES = 1024 * 1024;

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export interface IngressConfig {
  readonly listen: ListenAddress;
  /** The operator listener (/metrics, /livez, /readyz); none when absent. */
  readonly metricsListen: ListenAddress | undefined;
  /** /readyz: the head must have moved within this long. */
  readonly readinessHeadAgeMs: number;
  readonly upstreams: {
    readonly execution: UpstreamOptions;
    readonly submit: UpstreamOptions;
    /**
     * The same EL on connections of their own for the gas-heavy reads (src/call-gas.ts): at most
     * `heavy_connections` of them run at once, whoever sent them, and other reads never wait
     * behind them.
     */
    readonly heavy: UpstreamOptions;
    /**
     * The quick lane's pool beside it (src/el-turns.ts), for gas-heavy reads expected to be
     * short, so that they never wait behind a large one: as many connections as it runs calls.
     */
    readonly quick: UpstreamOptions;
    /**
     * The quick lane (src/el-turns.ts): its EL time in flight in calls of `ms` (0: no lane), the
     * most calls at once however short, and what it takes.
     */
    readonly quickCall: { readonly connections: number; readonly most: number; readonly gas: bigint; readonly ms: number };
    /**
     * The EL time one gas-heavy read may be expected to take, by its source's recent calls
     * (src/el-turns.ts): a longer one is refused before it is sent.
     */
    readonly maxCallMs: number;
    /** The consensus node's local API, for node-local methods and gauges. */
    readonly node: UpstreamOptions | undefined;
  };
  /** Origins allowed to call from a browser; `*` allows any. */
  readonly corsOrigins: readonly string[];
  /** How long SIGTERM waits for in-flight requests before closing what is left. */
  readonly drainTimeoutMs: number;
  /** Open client connections at most; more are closed on accept. Per worker. */
  readonly maxConnections: number;
  /** Open connections from one source at most (trusted proxies exempt); more are closed on accept. Per worker. */
  readonly maxConnectionsPerSource: number;
  /** Declared request-body bytes being received at once; a body that does not fit is refused unread. Per worker. */
  readonly maxBodyBytesInFlight: number;
  /** Processes serving the one public port (node:cluster); 1 runs no cluster. */
  readonly workers: number;
  /** Slow clients: time to send headers, time for a whole request, keep-alive idle time. */
  readonly clientTimeouts: {
    readonly headersMs: number;
    readonly requestMs: number;
    readonly keepAliveMs: number;
    readonly readStallMs: number;
    /** A body that brings no byte for this long is cut (408) and stops holding the body budget. */
    readonly bodyIdleMs: number;
  };
  readonly logLevel: LogLevel;
  /** The access log (src/access-log.ts): every `oneIn`-th request; absent: none. */
  readonly accessLog: { readonly oneIn: number } | undefined;
  /**
   * The answer cache (src/cache/): answers that cannot change, at most `maxBytes` of them (0: no
   * cache); the EL's finalized head asked every `followMs`.
   */
  readonly cache: { readonly maxBytes: number; readonly followMs: number; readonly shared: boolean };
  /** Where shared state lives: this process, or one Redis for a fleet. */
  readonly fleet: FleetOptions;
  /** Enabled plugins, in execution order. */
  readonly plugins: readonly ChainEntry[];
}

export function loadConfigFile(path: string): IngressConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parseConfig(text, path);
}

export function parseConfig(text: string, source = 'config'): IngressConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    throw new ConfigError(`${source}: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  return readConfig(OptionsReader.of('', doc));
}

function readConfig(root: OptionsReader): IngressConfig {
  const listen = readListen(root, 'listen');
  const metricsListen = root.optional('metrics_listen', () => readListen(root, 'metrics_listen'));
  const metricsPublic = root.boolean('metrics_public', false);
  // One idle heartbeat: 1,200 blockless commits (spec 1), about two minutes at ten a second.
  const readinessHeadAgeMs = root.integer('readiness_head_age_ms', 180_000);
  if (metricsListen !== undefined && !metricsPublic && !isLoopback(metricsListen.host)) {
    root.fail(
      'metrics_listen',
      'is not a loopback address: metrics are for local scraping; set metrics_public: true to expose them anyway',
    );
  }
  const upstreams = readUpstreams(root.child('upstreams'));
  const cors = root.child('cors');
  const corsOrigins = cors.stringList('allowed_origins', ['*']);
  cors.done();
  const drainTimeoutMs = root.integer('drain_timeout_ms', 10_000);
  const maxConnections = root.integer('max_connections', 10_000);
  // A quarter of the connections at most, and 256: one address never takes max_connections.
  const maxConnectionsPerSource = root.integer(
    'max_connections_per_source',
    Math.min(maxConnections, 256, Math.max(8, Math.floor(maxConnections / 64))),
    {
      max: maxConnections,
    },
  );
  // At least the largest body cap (1 MiB): any body the cap allows fits an idle budget.
  const maxBodyBytesInFlight = root.integer('max_body_bytes_in_flight', 64 * 1024 * 1024, { min: MAX_BODY_CAP_BYTES });
  const workers = root.integer('workers', 1, { max: 256 });
  const timeouts = root.child('client_timeouts');
  const headersMs = timeouts.integer('headers_ms', 10_000);
  const requestMs = timeouts.integer('request_ms', 30_000);
  const clientTimeouts = {
    headersMs,
    requestMs,
    keepAliveMs: timeouts.integer('keep_alive_ms', 5_000),
    readStallMs: timeouts.integer('read_stall_ms', 10_000),
    bodyIdleMs: timeouts.integer('body_idle_ms', Math.min(5_000, requestMs)),
  };
  if (clientTimeouts.requestMs < clientTimeouts.headersMs) timeouts.fail('request_ms', 'must be at least headers_ms');
  if (clientTimeouts.bodyIdleMs > requestMs) timeouts.fail('body_idle_ms', 'must be at most request_ms');
  timeouts.done();
  const logLevel = root.string('log_level', 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) root.fail('log_level', `must be one of ${LOG_LEVELS.join(', ')}`);
  let accessLog: IngressConfig['accessLog'];
  if (root.has('access_log')) {
    const section = root.child('access_log');
    accessLog = { oneIn: section.integer('one_in', 1, { min: 1 }) };
    section.done();
  }
  const cacheSection = root.child('cache');
  const cache = {
    maxBytes: cacheSection.integer('max_bytes', 64 * 1024 * 1024, { min: 0 }),
    followMs: cacheSection.integer('follow_ms', 1_000, { min: 50 }),
    shared: cacheSection.boolean('shared', false),
  };
  cacheSection.done();
  const fleet = readFleet(root);
  if (cache.shared && fleet.store !== 'redis') root.child('cache').fail('shared', 'needs store: redis (the cache is shared through it)');
  const plugins = readPlugins(root, 'plugins');
  root.done();
  return Object.freeze({
    listen,
    metricsListen,
    readinessHeadAgeMs,
    upstreams,
    corsOrigins,
    drainTimeoutMs,
    maxConnections,
    maxConnectionsPerSource,
    maxBodyBytesInFlight,
    workers,
    clientTimeouts,
    logLevel,
    accessLog,
    cache,
    fleet,
    plugins,
  });
}

function readListen(root: OptionsReader, key: string): ListenAddress {
  const text = root.string(key);
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || port > 65535) root.fail(key, 'must be host:port, e.g. 127.0.0.1:8545 or [::1]:8545');
  return { host: match[1] ?? match[2]!, port };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function readFleet(root: OptionsReader): FleetOptions {
  const store = root.string('store', 'memory');
  if (store !== 'memory' && store !== 'redis') root.fail('store', 'must be memory or redis');
  const inline = root.optionalString('redis_url');
  const fromSecret = root.has('redis_url_file') || root.has('redis_url_env') ? readSecret(root, 'redis_url') : undefined;
  if (inline !== undefined && fromSecret !== undefined) root.fail('redis_url', 'set redis_url or redis_url_file/redis_url_env, not both');
  if (inline !== undefined && /^rediss?:\/\/[^/]*@/.test(inline)) {
    root.fail('redis_url', 'carries credentials: put it in redis_url_file or redis_url_env');
  }
  const redisUrl = inline ?? fromSecret;
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) root.fail('redis_url', 'must be a redis:// or rediss:// URL');
  const sentinel = root.has('redis') ? readSentinel(root.child('redis')) : undefined;
  if (sentinel !== undefined && redisUrl !== undefined) root.fail('redis', 'set redis_url or redis (Sentinel), not both');
  if (store === 'redis' && redisUrl === undefined && sentinel === undefined) {
    root.fail('redis_url', 'is required with store: redis (or redis: with sentinels)');
  }
  return { store, redisUrl, sentinel };
}

/** `redis: { sentinels: [host:port, …], name, password_file | password_env }`: a Redis that fails over. */
function readSentinel(redis: OptionsReader): SentinelOptions {
  const sentinels = redis.stringList('sentinels', []).map((address) => {
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(address);
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) redis.fail('sentinels', `${address} is not host:port`);
    return { host: match[1] ?? match[2]!, port };
  });
  if (sentinels.length === 0) redis.fail('sentinels', 'must list at least one Sentinel, host:port');
  const name = redis.string('name');
  const password = redis.has('password_file') || redis.has('password_env') ? readSecret(redis, 'password') : undefined;
  redis.done();
  return { sentinels, name, password };
}

function readUpstreams(options: OptionsReader): IngressConfig['upstreams'] {
  const url = (key: string, fallback?: string) => options.httpUrl(key, fallback);
  const execution = url('execution');
  const submit = url('submit', execution);
  const node = options.optional('node', () => url('node'));
  const common = {
    connections: options.integer('connections', 128, { max: 4096 }),
    headersTimeoutMs: options.integer('headers_timeout_ms', 10_000),
    bodyTimeoutMs: options.integer('body_timeout_ms', 30_000),
  };
  // Half the host's cores, at least one: the EL runs beside the ingress, and its calls run on
  // the cores the EL needs for everything else (docs/rate-limits.md "EL time").
  const heavyConnections = options.integer('heavy_connections', defaultHeavyConnections(), { max: common.connections });
  const quickConnections = options.integer('quick_connections', 1, { min: 0, max: common.connections });
  const quickCall = {
    connections: quickConnections,
    most: quickConnections === 0 ? 0 : Math.max(quickConnections, Math.floor(common.connections / QUICK_SHARE_OF_CONNECTIONS)),
    gas: BigInt(options.integer('quick_call_gas', QUICK_CALL_GAS, { min: 21_000 })),
    ms: options.integer('quick_call_ms', QUICK_CALL_MS, { min: 1 }),
  };
  const maxCallMs = options.integer('max_call_ms', MAX_CALL_MS, { min: 100 });
  // node-api.md: short timeouts; an unreachable node is "unavailable", never empty data.
  const nodeTimeoutMs = options.integer('node_timeout_ms', 2_000);
  options.done();
  return {
    execution: { url: execution, ...common },
    submit: { url: submit, ...common },
    heavy: { url: execution, ...common, connections: heavyConnections },
    quick: { url: execution, ...common, connections: Math.max(1, quickCall.most) },
    quickCall,
    maxCallMs,
    node: node === undefined ? undefined : { url: node, connections: 8, headersTimeoutMs: nodeTimeoutMs, bodyTimeoutMs: nodeTimeoutMs },
  };
}

/** ~25 ms of the dearest hashing or BLAKE2F loop on anvil (BENCHMARKS "EL time"); a dapp read asks for far less. */
const QUICK_CALL_GAS = 2_000_000;
/** The victim's bound of issue 34: a quick call never waits behind more than about this much. */
const QUICK_CALL_MS = 50;
/** geth's `--rpc.evmtimeout`: what an EL cuts a call at (geth) is what a call may be expected to take here. */
const MAX_CALL_MS = 5_000;
/** Short calls run on the quick lane at once: at most a quarter of `connections`. */
const QUICK_SHARE_OF_CONNECTIONS = 4;

export function defaultHeavyConnections(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

function readPlugins(root: OptionsReader, key: string): readonly ChainEntry[] {
  if (!root.has(key)) root.fail(key, 'is required: the ordered list of plugins');
  const list = root.rawList(key);
  const entries: ChainEntry[] = [];
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const at = `${key}[${i}]`;
    let name: string;
    let raw: unknown;
    if (typeof item === 'string') {
      name = item;
    } else if (item !== null && typeof item === 'object' && !Array.isArray(item) && Object.keys(item).length === 1) {
      [name, raw] = Object.entries(item)[0]!;
    } else {
      throw new ConfigError(`${at}: must be a plugin name or a mapping {name: {options}}`);
    }
    const module = PLUGINS.get(name);
    if (!module) throw new ConfigError(`${at}: unknown plugin "${name}" (known: ${[...PLUGINS.keys()].join(', ')})`);
    if (seen.has(name)) throw new ConfigError(`${at}: plugin "${name}" is listed twice`);
    seen.add(name);
    const options = OptionsReader.of(`${at}.${name}`, raw);
    if (!options.boolean('enabled', true)) return;
    entries.push({ module, options: module.parseOptions(options) });
  });
  const violation = orderViolation(entries.map((e) => e.module.name));
  if (violation) throw new ConfigError(`${key}: ${violation} (list order is execution order)`);
  return Object.freeze(entries);
}
