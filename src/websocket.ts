/**
 * JSON-RPC over WebSocket on the public listener (issue 38): an upgrade on any path becomes a
 * connection whose every text message is one request, served as a POST's body is (server/index.ts's
 * `serveMessage`: the same chain, allowlist, limits and prices, the gate for submissions), its
 * answer sent back as one message. Answers may come in any order; ids match them.
 *
 * Bounds: a message over the body cap closes the connection (1009); at most
 * `IN_FLIGHT_PER_CONNECTION` requests unanswered per connection, past it -32005 at once; an
 * answer over `ANSWER_CAP_BYTES` is refused (-32603, use HTTP); a connection whose unsent answers,
 * with the notifications it is owed (notifier.ts), pass `SEND_BUFFER_CAP_BYTES` (a client that
 * stopped reading, or subscribed to more than it can take) is closed with 1008 and says why;
 * one that answers no ping within `PING_EVERY_MS` is cut. Connections count against
 * max_connections and max_connections_per_source as any other (the listener's own accounting).
 * On shutdown, each is closed with 1001 once its answers are sent. Subscriptions: subscriptions.ts.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { errors, transport } from './errors.js';
import { HeadFeed } from './head-feed.js';
import { formatResponse, idOf, type Answer } from './jsonrpc.js';
import { LogFeed } from './log-feed.js';
import type { Logger } from './log.js';
import { MessageSink } from './message-sink.js';
import type { Metrics } from './metrics.js';
import type { Runtime } from './runtime.js';
import type { RefusalHolds } from './refusal-hold.js';
import { serveMessage, transportBody } from './server/index.js';
import { ConnectionSubscriptions, Feeds } from './subscriptions.js';

const IN_FLIGHT_PER_CONNECTION = 32;
const ANSWER_CAP_BYTES = 16 * 1024 * 1024;
const SEND_BUFFER_CAP_BYTES = 32 * 1024 * 1024;
const PING_EVERY_MS = 30_000;
const CLOSE_WAIT_MS = 1_000;
const SLOW_CONSUMER_GRACE_MS = 5_000;
/** The longest a refused connection is held (refusal-hold.ts holds an HTTP one at most its timeout). */
const MAX_HOLD_MS = 10_000;
/** How often the head feed asks the EL for its latest block while anyone subscribes. */
const HEAD_POLL_MS = 250;

export interface WebSockets {
  /** Connections open now. */
  readonly open: number;
  /** Closes every connection (1001) and stops taking new ones. */
  close(): Promise<void>;
}

export function acceptWebSockets(
  server: Server,
  current: () => Runtime,
  log: Logger,
  metrics: Metrics,
  /** A connection upgraded: it is in use for as long as it lives (never closed as idle for a newcomer). */
  upgraded: (socket: IncomingMessage['socket']) => void = () => {},
): WebSockets {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: current().maxBodyBytes });
  const heads = new HeadFeed(() => current().stateReads, HEAD_POLL_MS);
  const feeds = new Feeds(heads, new LogFeed(heads, () => current().stateReads));
  metrics.webSockets = () => ({ connections: wss.clients.size, subscriptions: feeds.size });
  let closing = false;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (closing || !originAllowed(current(), req.headers.origin)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    // Anything but a complete WebSocket handshake gets the transport refusal a POST would, in JSON.
    if (
      req.headers.upgrade?.toLowerCase() !== 'websocket' ||
      req.headers['sec-websocket-key'] === undefined ||
      req.headers['sec-websocket-version'] !== '13'
    ) {
      metrics.transportRefused(transport.webSocketRefused.reason);
      const body = transportBody(transport.webSocketRefused);
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      upgraded(req.socket);
      serveConnection(ws, req, current, log, metrics, feeds);
    });
  });
  const pings = setInterval(() => {
    for (const ws of wss.clients) {
      const alive = ws as WebSocket & { alive?: boolean };
      if (alive.alive === false) {
        metrics.webSocketClosed('ping_timeout');
        ws.terminate();
        continue;
      }
      alive.alive = false;
      ws.ping();
    }
  }, PING_EVERY_MS).unref();
  return {
    get open() {
      return wss.clients.size;
    },
    async close() {
      closing = true;
      clearInterval(pings);
      feeds.close();
      const closed = [...wss.clients].map((ws) => new Promise<void>((resolve) => ws.once('close', () => resolve())));
      for (const ws of wss.clients) {
        metrics.webSocketClosed('shutdown');
        ws.close(1001, 'the endpoint is shutting down');
      }
      // A client that does not answer the close frame within a second is cut.
      const timer = setTimeout(() => {
        for (const ws of wss.clients) ws.terminate();
      }, CLOSE_WAIT_MS);
      await Promise.all(closed);
      clearTimeout(timer);
      wss.close();
    },
  };
}

/** A browser's page may connect only from an origin CORS allows (what it could POST from). */
function originAllowed(runtime: Runtime, origin: string | undefined): boolean {
  const allowed = runtime.config.corsOrigins;
  return origin === undefined || allowed.includes('*') || allowed.includes(origin);
}

function serveConnection(ws: WebSocket, req: IncomingMessage, current: () => Runtime, log: Logger, metrics: Metrics, feeds: Feeds): void {
  const peer = { address: req.socket.remoteAddress ?? '', headers: req.headers, path: req.url };
  const alive = ws as WebSocket & { alive?: boolean };
  alive.alive = true;
  ws.on('pong', () => (alive.alive = true));
  let inFlight = 0;
  const sink = new Set<MessageSink>();
  const slowConsumer = () => {
    if (ws.readyState !== WebSocket.OPEN) return;
    metrics.webSocketClosed('slow_consumer');
    ws.close(1008, `slow consumer: more than ${SEND_BUFFER_CAP_BYTES} bytes of answers unsent`);
    // A client that reads nothing does not read the close frame either: cut after a grace.
    setTimeout(() => ws.terminate(), SLOW_CONSUMER_GRACE_MS).unref();
  };
  const reply = (answer: Buffer | string) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(answer);
    if (ws.bufferedAmount > SEND_BUFFER_CAP_BYTES) slowConsumer();
  };
  const outbox = feeds.notifier.outbox(
    current().chain.requestSource(peer) ?? peer.address,
    {
      send: (text) => ws.send(text),
      corked: (sends) => {
        socket.cork();
        try {
          sends();
        } finally {
          socket.uncork();
        }
      },
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
      get open() {
        return ws.readyState === WebSocket.OPEN;
      },
    },
    SEND_BUFFER_CAP_BYTES,
    slowConsumer,
  );
  /** Messages read while the connection is held: served in order once the hold ends. */
  const waiting: Buffer[] = [];
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    const body = isBinary ? data : Buffer.from(data);
    if (heldUntil > 0) return void waiting.push(body);
    serveOne(body);
  });
  const serveOne = (body: Buffer) => {
    if (inFlight >= IN_FLIGHT_PER_CONNECTION) {
      return reply(formatResponse(idOf(safeParse(body)), { error: errors.rateLimited('in-flight', 100) }));
    }
    inFlight++;
    let message: MessageSink | undefined;
    message = new MessageSink((answer) => {
      inFlight--;
      sink.delete(message!);
      reply(answer ?? formatResponse(idOf(safeParse(body)), { error: errors.answerTooLarge(ANSWER_CAP_BYTES) }));
    }, ANSWER_CAP_BYTES);
    sink.add(message);
    message.once('close', () => {
      if (sink.delete(message!)) inFlight--;
    });
    // A large message costs what the same POST body costs, before it is parsed (rate-limit's
    // tokens per 4 KiB): a flood of 512 KiB batches must not be free because it came this way.
    const runtime = current();
    const admitted = runtime.chain.admitBody(peer, body.length);
    const serve = (verdict: Answer | undefined) =>
      verdict === undefined
        ? serveMessage(runtime, peer, body, message!, log, metrics, (request) => subscriptions.answer(request), holds)
        : message!.end(formatResponse(null, verdict));
    if (admitted instanceof Promise) admitted.then(serve, () => message!.end(formatResponse(null, { error: errors.internal() })));
    else serve(admitted);
  };
  // A refusal past the source's allowance stops reading the connection for its hold, as over
  // HTTP: a client that sends again at once instead of waiting waits anyway.
  const socket = req.socket;
  let heldUntil = 0;
  const holds: RefusalHolds = {
    refuse: (_res, ms, write) => {
      write();
      const until = Date.now() + Math.min(ms, MAX_HOLD_MS);
      if (until <= heldUntil) return;
      if (heldUntil === 0) socket.pause();
      heldUntil = until;
      const release = () => {
        if (Date.now() < heldUntil) return void setTimeout(release, heldUntil - Date.now()).unref();
        heldUntil = 0;
        // What came meanwhile is served in order, until one of it is held again.
        while (waiting.length > 0 && heldUntil === 0) serveOne(waiting.shift()!);
        if (heldUntil === 0) socket.resume();
      };
      setTimeout(release, until - Date.now()).unref();
    },
  };
  const subscriptions = new ConnectionSubscriptions(feeds, outbox, (count) => metrics.notificationSent(count));
  ws.on('close', () => {
    // Answers still being computed have nobody to go to: their upstream requests are released.
    for (const pending of [...sink]) pending.destroy();
    subscriptions.close();
    outbox.close();
  });
  ws.on('error', (err: Error & { code?: string }) => {
    if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') metrics.webSocketClosed('too_large');
    ws.terminate();
  });
}

function safeParse(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString());
  } catch {
    return undefined;
  }
}
