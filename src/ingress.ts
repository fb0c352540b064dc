/**
 * The ingress's lifecycle:
 * 1. build the runtime (upstream pools, plugin chain) from a validated config;
 * 2. listen; the address is fixed for the life of the process;
 * 3. reload: build a new runtime beside the old, swap, retire the old once its requests finish
 *    (a config that fails to build leaves the running one in place);
 * 4. shutdown: stop accepting, let in-flight requests finish up to the drain timeout, cut what
 *    is left, retire the runtime.
 */
import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isLoopback, type IngressConfig } from './config/load.js';
import type { Logger } from './log.js';
import { Metrics } from './metrics.js';
import { Server as NetServer } from 'node:net';
import { headOf, startProbeServer } from './probes.js';
import { Runtime } from './runtime.js';
import { SourceHolds } from './refusal-hold.js';
import { SourceConnections } from './source-connections.js';
import { acceptWebSockets } from './websocket.js';
import { transport } from './errors.js';
import { createContinueListener, createExpectationListener, createRequestListener, MAX_HEADERS, transportBody } from './server/index.js';

/** How long a drain lets requests already sent to idle connections arrive before closing those. */
const ON_THE_WIRE_MS = 50;

export interface Ingress {
  /** The JSON-RPC endpoint, e.g. http://127.0.0.1:8545. */
  readonly url: string;
  readonly port: number;
  /** The operator listener (/metrics, /livez, /readyz), when `metrics_listen` is set. */
  readonly metricsUrl: string | undefined;
  /** Swaps in a new configuration; throws (keeping the old one) if it cannot be built. */
  reload(config: IngressConfig): Promise<void>;
  /** Stops accepting, drains, closes. Idempotent. */
  shutdown(): Promise<void>;
}

export interface StartOptions {
  /** False in a cluster worker: the primary serves `metrics_listen` for all workers. */
  readonly operatorListener?: boolean;
}

export async function startIngress(
  config: IngressConfig,
  log: Logger,
  metrics = new Metrics(),
  options: StartOptions = {},
): Promise<Ingress> {
  let runtime = await Runtime.create(config, log, metrics);
  let active = 0;
  let drained: (() => void) | undefined;
  const { headersMs, requestMs, keepAliveMs } = config.clientTimeouts;
  // The server's own timeouts: set at start, a reload does not change them.
  const holds = new SourceHolds(Math.min(keepAliveMs, headersMs), (address) => runtime.peerSourceOf(address));
  const connections = new SourceConnections();
  const listener = createRequestListener(
    () => runtime,
    log,
    metrics,
    (socket) => {
      connections.idle(socket);
      if (--active === 0) drained?.();
    },
    holds,
  );
  metrics.inFlight = () => active;
  metrics.cache = () => runtime.cache?.counts;
  const server = createServer(
    {
      // Node's defaults (300 s per request, checked every 30 s) let a slow client hold a socket
      // for minutes; these are enforced to within a second.
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      keepAliveTimeout: keepAliveMs,
      connectionsCheckingInterval: Math.min(1_000, headersMs),
    },
    (req, res) => {
      active++;
      connections.busy(req.socket);
      listener(req, res);
    },
  );
  server.maxHeadersCount = MAX_HEADERS + 1;
  server.on(
    'checkContinue',
    createContinueListener((req, res) => server.emit('request', req, res)),
  );
  server.on('checkExpectation', createExpectationListener(metrics));
  const webSockets = acceptWebSockets(
    server,
    () => runtime,
    log,
    metrics,
    (socket) => connections.busy(socket),
  );
  // Past the cap, new connections are closed on accept (a flood cannot exhaust descriptors), or
  // let in in place of the busiest source's idlest (source-connections.ts). Node's own cap, one
  // above, only backs it up.
  server.maxConnections = config.maxConnections + 1;
  capConnections(server, connections, config.maxConnections, () => runtime, metrics);
  server.on('clientError', createClientErrorListener(metrics));
  try {
    await listen(server, config.listen.host, config.listen.port);
  } catch (err) {
    await runtime.retire();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  let probes: OperatorListener | undefined;
  try {
    probes = options.operatorListener === false ? undefined : await startOperatorListener(config, () => runtime, metrics, log);
  } catch (err) {
    // A partial start cleans up after itself: the public listener and the runtime go too.
    await new Promise((resolve) => server.close(resolve));
    await runtime.retire();
    throw err;
  }
  if (config.metricsListen === undefined) log.info('no metrics_listen: /metrics and the health probes are not served');
  else if (probes !== undefined) announceOperatorListener(probes.url, config.metricsListen.host, log);
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  let stopping: Promise<void> | undefined;

  return {
    url: `http://${host}:${port}`,
    port,
    metricsUrl: probes?.url,
    async reload(next) {
      if (next.listen.host !== config.listen.host || next.listen.port !== config.listen.port) {
        log.warn('listen address changes take effect only after a restart', { listen: `${host}:${port}` });
      }
      const fresh = await Runtime.create(next, log, metrics, runtime);
      const old = runtime;
      runtime = fresh;
      fresh.adopt();
      log.info('configuration reloaded', { plugins: fresh.chain.names });
      await old.retire();
    },
    shutdown() {
      stopping ??= (async () => {
        // Requests waiting unread in held connections are read and answered, not cut as idle.
        await holds.releaseAll();
        await webSockets.close();
        const { closed } = await stopAccepting(server);
        if (active > 0) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            new Promise<void>((resolve) => (drained = resolve)),
            new Promise<void>((resolve) => (timer = setTimeout(resolve, runtime.config.drainTimeoutMs))),
          ]);
          clearTimeout(timer);
          if (active > 0) log.warn('drain timeout: closing requests still in flight', { requests: active });
        }
        server.closeAllConnections();
        await closed;
        await probes?.close();
        await runtime.retire();
      })();
      return stopping;
    },
  };
}

/**
 * New connections stop at once (net's close: http's would also close the idle ones); a request
 * already on the wire to an idle keep-alive connection (a held one just let go, say) is then read
 * and answered, not cut with a reset by the close of idle connections, which follows. `closed`:
 * once every connection has ended.
 */
async function stopAccepting(server: Server): Promise<{ readonly closed: Promise<void> }> {
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, ON_THE_WIRE_MS));
  // http's close now: the idle connections, and its connection checks (not listening: no error thrown).
  server.close(() => {});
  server.closeIdleConnections();
  return { closed };
}

/**
 * Malformed HTTP, oversized headers and slow clients: a status with a JSON body, then the socket
 * is destroyed once that is written. end() alone only half-closes it: a client that never closes
 * its side kept the socket, and its max_connections slot, for ever.
 */
function createClientErrorListener(metrics: Metrics) {
  return (err: NodeJS.ErrnoException, socket: Duplex) => {
    const refusal =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? transport.requestTimeout
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? transport.headersTooLarge
          : transport.badRequest;
    metrics.transportRefused(refusal.reason);
    if (!socket.writable) return void socket.destroy();
    const body = transportBody(refusal);
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  };
}

type OperatorListener = Awaited<ReturnType<typeof startProbeServer>>;

/** The operator listener (/metrics, /livez, /readyz) on `metrics_listen`, when it is set. */
async function startOperatorListener(
  config: IngressConfig,
  current: () => Runtime,
  metrics: Metrics,
  log: Logger,
): Promise<OperatorListener | undefined> {
  if (config.metricsListen === undefined) return undefined;
  return startProbeServer(
    config.metricsListen.host,
    config.metricsListen.port,
    {
      ownMetrics: async () => ({ text: await metrics.registry.metrics(), contentType: metrics.registry.contentType }),
      elHead: () => headOf(current().stateReads),
      nodeMetrics: async () => current().node?.call('svc_metrics', []),
    },
    log,
    config.readinessHeadAgeMs,
  );
}

export function announceOperatorListener(url: string, host: string, log: Logger): void {
  log.info('operator listener: /metrics, /livez, /readyz', { url });
  if (!isLoopback(host)) log.warn('metrics_listen is not a loopback address (metrics_public: true): scrape it from a trusted network only');
}

/**
 * `max_connections_per_source`: a source holding that many connections has its next one closed
 * on accept, before a byte is read, so one address cannot take `max_connections` from everyone;
 * at `max_connections`, a less busy source's connection takes the place of the busiest source's
 * idlest (source-connections.ts). The source is rate-limit's (trusted proxies exempt), else the
 * address (IPv6 by /64).
 */
function capConnections(
  server: Server,
  connections: SourceConnections,
  maxConnections: number,
  current: () => Runtime,
  metrics: Metrics,
): void {
  server.on('connection', (socket: Socket) => {
    const runtime = current();
    const refused = connections.admit(socket, runtime.config.maxConnectionsPerSource, runtime.peerSourceOf, maxConnections);
    if (refused === undefined) return;
    metrics.transportRefused(refused === 'source' ? CONNECTIONS_PER_SOURCE : MAX_CONNECTIONS);
    socket.destroy();
  });
}

/** The /metrics reasons of a connection closed on accept: its source's cap, or the process's. */
const CONNECTIONS_PER_SOURCE = 'connections_per_source';
const MAX_CONNECTIONS = 'max_connections';

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
