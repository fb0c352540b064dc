/**
 * What one configuration builds: the upstream pools and the plugin chain. SIGHUP builds a new
 * runtime beside the running one and swaps it in; the old one is retired once the requests that
 * started on it have finished, so a reload never cuts a request short. The gas-heavy reads'
 * turns are handed on (resized), and their lanes' connections too while their settings are
 * unchanged: the calls still running on the old runtime count against the new one's lanes.
 */
import { type AccessLog, createAccessLog } from './access-log.js';
import { InFlightReads } from './cache/in-flight.js';
import { ReadCache } from './cache/index.js';
import { CarryOver } from './carry-over.js';
import { Chain } from './chain.js';
import { MAX_BODY_CAP_BYTES, type IngressConfig } from './config/load.js';
import { createCors, type Cors } from './cors.js';
import { ElTurns, type ElLanes } from './el-turns.js';
import { Fleet } from './fleet.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { Reachability } from './reachability.js';
import { Upstream } from './upstream.js';

/**
 * A lane's turn ends when the EL has answered, but its answer may still be streaming to a client
 * that reads slowly: each lane's pool keeps this many connections per turn, so that such clients
 * (two per source at most, max_heavy_in_flight_per_source) do not hold the next turn's connection.
 */
const LANE_CONNECTIONS_PER_TURN = 4;
/** Connections of the pool for the ingress's own state reads (PluginEnv.stateReads). */
const STATE_READ_CONNECTIONS = 16;

export class Runtime {
  readonly maxBodyBytes: number;
  /** The chain's name for a TCP peer's source (`Plugin.connectionSource`), made once. */
  readonly peerSourceOf: (address: string) => string | null | undefined;
  /** Told the EL time of every other read streamed: whether the EL was serving reads (el-turns.ts). */
  readonly readAnswered: (elMs: number) => void;
  private inflight = 0;
  /** False once a lane's pool is handed on to the runtime replacing this one, which closes it. */
  private readonly owns = { heavy: true, quick: true, cache: true };
  /** Identical reads in flight sharing one EL answer; off with the cache (`cache.max_bytes: 0`). */
  readonly inFlightReads: InFlightReads | undefined;
  private onIdle: (() => void) | undefined;

  private constructor(
    readonly config: IngressConfig,
    readonly chain: Chain,
    readonly execution: Upstream,
    readonly stateReads: Upstream,
    /** Gas-heavy reads (src/call-gas.ts), on connections of their own: any of them... */
    readonly heavy: Upstream,
    /** ...and those expected to be short (src/el-turns.ts). */
    readonly quick: Upstream,
    /** Gas-heavy reads' turns on the two lanes, by the EL time each source used. */
    readonly elTurns: ElTurns,
    private readonly submit: Upstream,
    readonly node: Upstream | undefined,
    private readonly fleet: Fleet,
    private readonly relays: readonly Upstream[],
    readonly cors: Cors,
    private readonly carried: CarryOver,
    /** The access log, when the config has one. */
    readonly accessLog: AccessLog | undefined,
    /** Answers that cannot change (src/cache/); none with `cache.max_bytes: 0`. */
    readonly cache: ReadCache | undefined,
  ) {
    this.maxBodyBytes = chain.maxBodyBytes(MAX_BODY_CAP_BYTES);
    this.peerSourceOf = (address) => chain.connectionSource(address);
    this.readAnswered = (elMs) => elTurns.answered(elMs);
    this.inFlightReads = config.cache.maxBytes > 0 ? new InFlightReads() : undefined;
  }

  /** Whether the EL answers, as requests find out; one for every runtime of the process. */
  get elReachability(): Reachability | undefined {
    return this.execution.options.reachability;
  }

  /** `previous`: the runtime this one replaces on a reload, whose carried state it keeps (see `Carried`). */
  static async create(config: IngressConfig, log: Logger, metrics: Metrics, previous?: Runtime): Promise<Runtime> {
    const carried = new CarryOver(previous?.carried.kept);
    const onError = (kind: 'unavailable' | 'invalid') => metrics.upstreamError(kind);
    // One for every pool to the EL, kept across reloads: its state changes are logged once.
    const reachability = previous?.elReachability ?? new Reachability(log, 'execution layer');
    const execution = new Upstream({ ...config.upstreams.execution, reachability }, onError);
    const stateReads = new Upstream(
      { ...config.upstreams.execution, connections: STATE_READ_CONNECTIONS, retryClosedConnection: true, reachability },
      onError,
    );
    const submit =
      config.upstreams.submit.url === config.upstreams.execution.url ? execution : new Upstream(config.upstreams.submit, onError);
    const node = config.upstreams.node === undefined ? undefined : new Upstream(config.upstreams.node, onError);
    const fleet = new Fleet(config.fleet, log, metrics);
    const relays: Upstream[] = [];
    const relayTo = (url: string, longestWaitMs = 0) => {
      const { headersTimeoutMs } = config.upstreams.execution;
      const relay = new Upstream(
        { ...config.upstreams.execution, url, isIngress: true, headersTimeoutMs: headersTimeoutMs + longestWaitMs },
        onError,
      );
      relays.push(relay);
      return relay;
    };
    try {
      const env = { execution, stateReads, submit, node, relayTo, log, shared: fleet, metrics, carried };
      const chain = await Chain.create(config.plugins, env, metrics);
      const cors = createCors(config.corsOrigins);
      // Nothing after this throws: the previous runtime no longer closes what it hands on.
      const lane = (name: 'heavy' | 'quick') =>
        previous !== undefined && JSON.stringify(previous.config.upstreams[name]) === JSON.stringify(config.upstreams[name])
          ? previous.handOn(name)
          : new Upstream(
              { ...config.upstreams[name], connections: LANE_CONNECTIONS_PER_TURN * config.upstreams[name].connections, reachability },
              onError,
            );
      const heavy = lane('heavy');
      const quick = lane('quick');
      const lanes: ElLanes = {
        heavy: config.upstreams.heavy.connections,
        quick: config.upstreams.quickCall.connections,
        quickMost: config.upstreams.quickCall.most,
        quickGas: config.upstreams.quickCall.gas,
        quickMs: config.upstreams.quickCall.ms,
        callMs: config.upstreams.maxCallMs,
      };
      const elTurns = previous?.elTurns ?? new ElTurns(lanes);
      elTurns.resize(lanes);
      const accessLog = config.accessLog === undefined ? undefined : createAccessLog(config.accessLog.oneIn, log);
      const cache = readCache(config, () => stateReads, previous, fleet);
      return new Runtime(
        config,
        chain,
        execution,
        stateReads,
        heavy,
        quick,
        elTurns,
        submit,
        node,
        fleet,
        relays,
        cors,
        carried,
        accessLog,
        cache,
      );
    } catch (err) {
      await closeUpstreams(execution, submit);
      await Promise.all([stateReads.close(), node?.close(), ...relays.map((relay) => relay.close())]);
      await fleet.close();
      throw err;
    }
  }

  /** Called once this runtime serves in place of `previous`: carried state takes the new numbers. */
  adopt(): void {
    this.carried.commit();
  }

  enter(): void {
    this.inflight++;
  }

  leave(): void {
    if (--this.inflight === 0) this.onIdle?.();
  }

  /** The cache, for the runtime replacing this one: it is that one's to close now. */
  handOnCache(): ReadCache | undefined {
    this.owns.cache = false;
    return this.cache;
  }

  /** A lane's pool, for the runtime replacing this one: it is that one's to close now. */
  private handOn(lane: 'heavy' | 'quick'): Upstream {
    this.owns[lane] = false;
    return this[lane];
  }

  /** Waits for the requests that started on this runtime, then closes its chain and pools. */
  async retire(): Promise<void> {
    if (this.inflight > 0) await new Promise<void>((resolve) => (this.onIdle = resolve));
    await this.chain.close();
    if (this.owns.cache) this.cache?.close();
    await closeUpstreams(this.execution, this.submit);
    await Promise.all([
      this.stateReads.close(),
      this.owns.heavy ? this.heavy.close() : undefined,
      this.owns.quick ? this.quick.close() : undefined,
      this.node?.close(),
      ...this.relays.map((relay) => relay.close()),
    ]);
    await this.fleet.close();
  }
}

/** The previous runtime's cache while the EL and the cache's settings are the same: a reload keeps what it holds. */
function readCache(config: IngressConfig, stateReads: () => Upstream, previous: Runtime | undefined, fleet: Fleet): ReadCache | undefined {
  if (config.cache.maxBytes === 0) return undefined;
  const kept = previous?.cache;
  if (
    kept !== undefined &&
    previous!.config.upstreams.execution.url === config.upstreams.execution.url &&
    JSON.stringify(kept.options) === JSON.stringify(config.cache)
  ) {
    const cache = previous!.handOnCache()!;
    cache.el = stateReads;
    return cache;
  }
  return new ReadCache(config.cache, stateReads, config.cache.shared ? fleet.redis : undefined);
}

async function closeUpstreams(execution: Upstream, submit: Upstream): Promise<void> {
  await Promise.all(execution === submit ? [execution.close()] : [execution.close(), submit.close()]);
}
