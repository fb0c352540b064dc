/**
 * The plugin contract. Every entry of the YAML `plugins:` list is one `PluginModule`; the list
 * order is the execution order.
 *
 * - `handle(ctx)` returns an `Answer` to answer the request (result or error: the chain stops
 *   there) or `undefined` to pass it to the next plugin. When every plugin passes, the core
 *   streams the request to the execution upstream. A plugin may return a promise of either.
 * - The request (`ctx.request`) is frozen: plugins read it and never rewrite it. What the EL
 *   receives is exactly what every plugin saw.
 * - `ctx.facts` is append-only: a plugin may record a fact for later plugins (auth records
 *   `operator`), and nobody may overwrite it. Plugins read facts only through the keys in
 *   `facts.ts`, never each other's modules.
 * - `ctx.tab` is the request's tab with its source (request-tab.ts): the plugin that prices
 *   requests keeps it (rate-limit); a later one takes more from it or owes to it, the core
 *   records the EL's time on it, and anyone may add a hook to run when the response closes.
 * - Throwing is a bug: the client gets a generic internal error and the stack goes to the log.
 *   Expected failures are answered with catalogue errors (`errors.ts`); a helper deep inside a
 *   plugin may throw `RpcFailure` to the same effect.
 * - `methods`, when set, names every method `handle` can answer or record a fact for: the chain
 *   calls `handle` for those methods only (the set is read once, at start). Without it, `handle`
 *   sees every request. `handle` must still pass any other method it is given.
 * - `hiddenMethods` names methods this plugin's configuration leaves unserved although they are
 *   on the read surface (local-methods' bootstrap methods without `bootstrap_anchor`): the chain
 *   answers them exactly as an unknown method before any plugin runs, so that no later plugin
 *   (a rate limit's 429, say) answers them otherwise than an unknown method would be answered.
 * - `handleBatch(elements)` is called for a JSON array body before any request is read (the
 *   ingress answers one request per HTTP call; the hook only shapes the refusal). `undefined`
 *   leaves it to the next plugin, or to the core's single id-less refusal.
 * - `maxBodyBytes` asks the transport to cap request bodies; the smallest cap wins.
 * - `admitBody(peer, bytes)` is called with each body's declared length (`Content-Length`) before
 *   a byte of it is read (receiving and parsing a large body is the work): an `Answer` refuses
 *   it there, unread, with id null and the connection closed; `undefined` lets the body be read,
 *   then parsed and walked through the chain. rate-limit charges large bodies here.
 * - `connectionSource(address)` names the source a new TCP connection from `address` counts
 *   against (`max_connections_per_source`), or null for a peer that speaks for others (a trusted
 *   proxy: not capped); the first plugin that has it decides. rate-limit names its own source.
 *   `requestSource(peer)` names the source of a request (behind a trusted proxy, its forwarded
 *   client), for what the core shares by source before the chain runs (the body budget).
 * - `carried` in the env hands state from the runtime a reload replaces to the new one (see
 *   `Carried`): what a source has spent and what the gate admitted survive a SIGHUP.
 * - `create()` opens what the plugin needs (pay at init, not per request); `close()` releases
 *   it, must be idempotent, and is called even when a later plugin's `create()` failed.
 * - `shared` names the state a plugin keeps for all workers of one host (`workers: N` without
 *   Redis): the primary process builds each object and answers the workers' calls to it.
 *
 * This module is a plugin's only door into `src/`: besides the contract, it re-exports the few
 * helpers plugins share with the core (the error catalogue, facts, the method surface). Anything
 * else a plugin needs arrives in its `PluginEnv`. test/src/plugin.test.ts holds every plugin to it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Redis } from 'ioredis';
import type { Answer, RpcId, RpcRequest } from './jsonrpc.js';
import type { OptionsReader } from './config/reader.js';
import type { Facts } from './facts.js';
import type { RequestTab } from './request-tab.js';
import type { Logger } from './log.js';
import type { Upstream } from './upstream.js';

export { callsOf, DEFAULT_RPC_GAS_CAP, GAS_HEAVY_METHODS, gasOf, namesGasOtherwise, requestGas } from './call-gas.js';
export { errors, LIMIT_EXCEEDED, METHOD_NOT_FOUND, RpcFailure, type RpcError } from './errors.js';
export { CALL_GAS, CLOSED, Facts, OPERATOR, SOURCE, SUBSCRIBER, type Fact } from './facts.js';
export { RequestTab, type TabKeeper } from './request-tab.js';
export { idOf, type Answer, type RpcId, type RpcRequest } from './jsonrpc.js';
export type { Fields, Logger } from './log.js';
export { throttledWarning, type ThrottledWarning } from './log-throttle.js';
export { MemoryBuckets, type BucketSpec, type Consumed } from './memory-buckets.js';
export {
  INGRESS_METHODS,
  NODE_LOCAL_METHODS,
  PRICED_BY_SIZE,
  PROXIED_SVC_METHODS,
  READ_METHODS,
  SUBMISSION_ONLY,
  SYNC_SUBMISSION_METHOD,
} from './methods.js';
export { sharedFor } from './recent.js';
export { FairQueue } from './fair-queue.js';
export { IdleSweep } from './idle-sweep.js';
export { OptionsReader } from './config/reader.js';
export { readSecret } from './config/secret.js';
// A class for worker threads, which cannot be handed the env's upstreams (the gate's pool).
export { Upstream, type UpstreamOptions } from './upstream.js';

export type Verdict = Answer | undefined;

export interface RequestContext {
  readonly request: RpcRequest;
  /** The TCP peer, the request's headers as received, and its URL's path (and query), if known. */
  readonly peer: { readonly address: string; readonly headers: IncomingHttpHeaders; readonly path?: string };
  readonly facts: Facts;
  /** What the request costs its source beyond its price: taken, owed, the EL's time; and its close hooks. */
  readonly tab: RequestTab;
}

/** One element of a batch refusal. */
export interface BatchAnswer {
  readonly id: RpcId;
  readonly answer: Answer;
}

export interface Plugin {
  readonly name: string;
  readonly maxBodyBytes?: number;
  admitBody?(peer: RequestContext['peer'], bytes: number): Verdict | Promise<Verdict>;
  connectionSource?(address: string): string | null;
  requestSource?(peer: RequestContext['peer']): string;
  handleBatch?(elements: readonly unknown[]): readonly BatchAnswer[] | undefined;
  handle?(ctx: RequestContext): Verdict | Promise<Verdict>;
  /** The only methods `handle` acts on; absent: every method. */
  readonly methods?: ReadonlySet<string>;
  /** Methods answered as unknown, before the walk (see above). */
  readonly hiddenMethods?: ReadonlySet<string>;
  close?(): void | Promise<void>;
}

/** What `create()` may use; shared by every plugin of one chain. */
export interface PluginEnv {
  /** The EL: reads, and state for the gate. */
  readonly execution: Upstream;
  /**
   * The same EL on a small pool of its own, for the state the ingress reads for itself (the
   * gate's head state and validation; the probes use it too): clients' reads in flight, slow
   * readers included, never hold its connections.
   */
  readonly stateReads: Upstream;
  /** Where admitted submissions go (the execution upstream unless configured). */
  readonly submit: Upstream;
  /** The consensus node's local API (node-api.md), when configured. */
  readonly node: Upstream | undefined;
  /**
   * Another svc-ingress to forward to (a follower gate's validator), with the execution
   * upstream's pool size and timeouts, its headers timeout lengthened by `longestWaitMs` (an
   * answer the relay holds on purpose: a sync submission's receipt wait). Its 429 answers are
   * read as JSON-RPC, its failures are counted like every upstream's, and it is closed with the
   * runtime.
   */
  relayTo(url: string, longestWaitMs?: number): Upstream;
  readonly log: Logger;
  /** Where state shared by instances lives: see `SharedState`. */
  readonly shared: SharedState;
  /** The process's metrics: plugins declare the series they count. */
  readonly metrics: PluginMetrics;
  /** State kept across reloads (see `Carried`). */
  readonly carried: Carried;
}

/**
 * The door through which state outlives a reload. `keep(key, make, adopt)` returns the object
 * kept under `key` by the runtime being replaced (or `make()`'s, the first time); `adopt` runs on
 * it once the new runtime is built and swapped in (never if building fails: the running runtime
 * keeps it as it was), e.g. to resize buckets to new numbers. Both runtimes share the object while
 * the old one drains. An object the new runtime does not keep is dropped. Keys start with the
 * plugin's name.
 */
export interface Carried {
  keep<T extends object>(key: string, make: () => T, adopt?: (kept: T) => void): T;
}

/**
 * State shared by several processes: a fleet's Redis, or, for the workers of one host without
 * Redis, the primary process (hosting what the plugin's `shared` builds). Neither is a single
 * point of failure: `either` answers from the local twin while the shared home fails.
 */
export interface SharedState {
  /** The shared home this process uses, built by the matching function; undefined: none (one process). */
  home<T>(homes: { redis(client: Redis): T; primary(call: PrimaryCall): T }): T | undefined;
  /**
   * `remote()` against the shared home, or `local()` when there is none or it fails (counted and
   * logged as `what`). `remote` must throw only for store failures; verdicts are return values.
   */
  either<T>(what: string, remote: () => Promise<T>, local: () => T | Promise<T>): Promise<T>;
}

/** Calls `method(...args)` on the primary's object of `service` (a plugin's `shared` entry) for `key`. */
export type PrimaryCall = (service: string, key: string, init: unknown, method: string, args: unknown[]) => Promise<unknown>;

export interface PluginMetrics {
  /**
   * A counter on /metrics (the name starts `svc_ingress_`), counted by label values in
   * `labelNames` order; label values must come from closed sets. Declaring the same name again
   * (after a reload) returns the same counter; other help or labels are a bug and throw.
   */
  counter(name: string, help: string, labelNames: readonly string[]): LabelledCounter;
  /** Counts a transaction the gate admitted and the submission target acknowledged (spec 2.3). */
  sequenced(): void;
  /** `svc_dropStats`' `ingress.txs_sequenced_total`: every `sequenced()` of this process. */
  readonly sequencedTotal: number;
}

export interface LabelledCounter {
  inc(...labelValues: string[]): void;
}

export interface PluginModule<Options = unknown> {
  /** The YAML key, file name and metric label. */
  readonly name: string;
  /** Reads this plugin's YAML options; must call `options.done()`. */
  parseOptions(options: OptionsReader): Options;
  create(options: Options, env: PluginEnv): Plugin | Promise<Plugin>;
  /** Per service name: builds, in the primary, the object workers call (src/cluster/calls.ts). */
  readonly shared?: Readonly<Record<string, (init: unknown) => object>>;
}
