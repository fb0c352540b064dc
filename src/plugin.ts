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
 * - `admitBody(peer, bytes)` is called with each body's size before it is parsed (parsing a
 *   large body is the work): an `Answer` refuses it there, unparsed, with id null; `undefined`
 *   lets it on to the parser and the chain. rate-limit charges large bodies here.
 * - `create()` opens what the plugin needs (pay at init, not per request); `close()` releases
 *   it, must be idempotent, and is called even when a later plugin's `create()` failed.
 * - `shared` names the state a plugin keeps for all workers of one host (`workers: N` without
 *   Redis): the primary process builds each object and answers the workers' calls to it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Answer, RpcId, RpcRequest } from './jsonrpc.js';
import type { OptionsReader } from './config/reader.js';
import type { Facts } from './facts.js';
import type { Fleet } from './fleet.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import type { Upstream } from './upstream.js';

export type Verdict = Answer | undefined;

export interface RequestContext {
  readonly request: RpcRequest;
  /** The TCP peer and the request's headers, as received. */
  readonly peer: { readonly address: string; readonly headers: IncomingHttpHeaders };
  readonly facts: Facts;
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
  readonly log: Logger;
  /** Shared state for a fleet (Redis), with local fallbacks. */
  readonly fleet: Fleet;
  /** The process's metrics; plugins count what they decide. */
  readonly metrics: Metrics;
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
