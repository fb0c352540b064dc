/**
 * The HTTP face of the ingress: transport checks, one JSON-RPC request per POST, the plugin
 * chain, then either the chain's answer or the EL's answer streamed through.
 *
 *   POST ─► transport (405/415/413) ─► Content-Length charged, unread (503/429 budget, 429 tokens)
 *        ─► body read ─► JSON (-32700) ─► array? batch refusal
 *        ─► envelope (-32600) ─► plugin chain ─► Answer ──────────► JSON-RPC response
 *                                              └► pass ─► stream to EL ─► piped response
 *
 * This handler never throws: every path ends in exactly one response (or, once an upstream
 * answer has started streaming, a cut connection).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type AccessEntry, errorCodeOf, requestIdOf } from './access-log.js';
import { withId } from './cache/answer-cache.js';
import type { CacheRule } from './cache/rules.js';
import { callTarget, DEFAULT_RPC_GAS_CAP, GAS_HEAVY_METHODS, requestGas, runsOf } from './call-gas.js';
import { bodyTooLarge, errors, INVALID_REQUEST, RpcFailure, transport, type RpcError, type TransportRefusal } from './errors.js';
import { BodyBudget, SMALL_BODY_BYTES } from './body-budget.js';
import type { RefusalHolds, SourceHolds } from './refusal-hold.js';
import { peerSource } from './source-connections.js';
import { CALL_GAS, CLOSED, EL_TIME, Facts, ON_CLOSE, SOURCE, SUBSCRIBER } from './facts.js';
import { canonicalBody, formatResponse, isJsonContentType, readRequest, type Answer, type RpcId, type RpcRequest } from './jsonrpc.js';
import { describeError, type Logger } from './log.js';
import type { MessageSink } from './message-sink.js';
import type { Metrics, Outcome } from './metrics.js';
import type { RequestContext, Verdict } from './plugin.js';
import type { Runtime } from './runtime.js';

/** Request headers a client may send; the server keeps one more so that a longer list shows. */
export const MAX_HEADERS = 100;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** What one request's single 'close' listener reports: its method, once read, and outcome. */
interface Trace {
  method: string | undefined;
  outcome: Outcome;
  started: number;
  /** Releases the upstream request of an answer still streaming. */
  cancelUpstream: (() => void) | undefined;
  /** The request's facts, once it has been read: what plugins hold for it is released on close. */
  facts: Facts | undefined;
  /** Gives the body budget back the declared length of a body not read yet. */
  releaseBody: (() => void) | undefined;
  /** A gas-heavy call the EL has not answered yet: what its source holds waits for the answer. */
  elPending: boolean;
  /** What the response's close would have released, deferred until the EL answers. */
  afterEl: (() => void) | undefined;
  /** Bytes of the EL's answer streamed (as it declared them), for the access log. */
  streamedBytes: number;
  /** A WebSocket connection's own methods (eth_subscribe): asked once the chain passed, before the EL. */
  local: ((request: RpcRequest) => Answer | undefined) | undefined;
}

/**
 * `onSettled` is called once per request when its response has closed (finished or cut),
 * whichever path it took: the ingress counts in-flight requests with it for the drain. A source
 * refused past its allowance is held (`holds`, refusal-hold.ts).
 */
export function createRequestListener(
  current: () => Runtime,
  log: Logger,
  metrics: Metrics,
  onSettled: (socket: Socket) => void,
  holds: SourceHolds,
) {
  // Declared body bytes being received, across reloads.
  const budget = new BodyBudget();
  metrics.bodyBytesInFlight = () => budget.inFlight;
  metrics.elCalls = () => {
    const { elTurns } = current();
    return { waiting: elTurns.queued, quick: elTurns.runningOn('quick'), heavy: elTurns.runningOn('heavy') };
  };
  return function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const runtime = current();
    const trace = newTrace();
    const { accessLog } = runtime;
    // Echoed when the client sent one (a proxy's), made when there is an access log to find it in.
    const requestId = requestIdOf(req.headers['x-request-id'], accessLog !== undefined);
    if (requestId !== undefined) res.setHeader('x-request-id', requestId);
    const receivedAt = accessLog === undefined ? 0 : performance.now();
    runtime.enter();
    let settled = false;
    // One listener per request does all the bookkeeping (listeners are measurable at this rate).
    const settle = () => {
      if (settled) return;
      settled = true;
      settleTrace(runtime, res, trace, metrics);
      accessLog?.(() => accessEntry(runtime, req, res, trace, requestId, receivedAt));
      onSettled(req.socket);
    };
    res.on('close', settle);
    // Pipelined behind an unwritten answer: settled with its connection; past PIPELINED_MAX,
    // refused in order (no body read, nothing judged) and the connection closed after it.
    if (res.socket === null && closeWithConnection(req.socket, res, settle) > PIPELINED_MAX) {
      req.socket.pause();
      return refuseTransport(res, metrics, transport.tooManyPipelined);
    }
    // Read while its connection is held: served once the hold has passed (refusal-hold.ts).
    const heldFor = holds.heldFor(req.socket);
    if (heldFor > 0) return holds.defer(req.socket, heldFor, () => serveRequest(runtime, budget, req, res, trace, log, metrics, holds));
    serveRequest(runtime, budget, req, res, trace, log, metrics, holds);
  };
}

/** A request's trace before it is read: until an answer is decided, a client that leaves counts as abandoned. */
function newTrace(local: Trace['local'] = undefined): Trace {
  return {
    method: undefined,
    outcome: 'abandoned',
    started: 0,
    cancelUpstream: undefined,
    facts: undefined,
    releaseBody: undefined,
    elPending: false,
    afterEl: undefined,
    streamedBytes: 0,
    local,
  };
}

/** What a request holds, given back once its answer is written or cut (the request path's one 'close' listener). */
function settleTrace(runtime: Runtime, res: ServerResponse, trace: Trace, metrics: Metrics): void {
  // An answer still streaming from the EL is abandoned.
  if (!res.writableFinished) trace.cancelUpstream?.();
  trace.releaseBody?.();
  if (trace.facts !== undefined) {
    // A gas-heavy call the client left is still computing on the EL: its source's slots are
    // given back when the EL has answered, not now.
    if (trace.elPending) trace.afterEl = trace.facts.get(ON_CLOSE);
    else trace.facts.get(ON_CLOSE)?.();
    if (!trace.facts.get(CLOSED)) trace.facts.set(CLOSED, true);
  }
  runtime.leave();
  if (trace.method !== undefined) metrics.request(trace.method, trace.outcome, (performance.now() - trace.started) / 1000);
}

/**
 * One WebSocket message (websocket.ts): a request as a POST's body is one, through the same
 * chain and the same EL path, its answer written into `sink`; a refusal past the source's
 * allowance holds what `holds` says (the connection's socket, paused).
 */
export function serveMessage(
  runtime: Runtime,
  peer: RequestContext['peer'],
  body: Buffer,
  sink: MessageSink,
  log: Logger,
  metrics: Metrics,
  local: (request: RpcRequest) => Answer | undefined,
  holds: RefusalHolds,
): void {
  const res = sink as unknown as ServerResponse;
  const trace = newTrace(local);
  runtime.enter();
  sink.once('close', () => settleTrace(runtime, res, trace, metrics));
  handleBody(runtime, peer, res, body, log, metrics, trace, holds);
}

/** Per connection, the responses pipelined behind an answer not written yet. */
const queuedResponses = new WeakMap<Socket, Set<() => void>>();

/**
 * Requests a connection may have waiting behind an answer not written yet: past the default
 * `max_in_flight_per_source` they could only be refused, each read and judged for nothing (one
 * write of 500 pipelined requests was 500 refusals). Those past it get a transport refusal in
 * order, and the connection closes after the first.
 */
const PIPELINED_MAX = 32;

/**
 * A response pipelined behind an answer not written yet: if its connection goes first, Node
 * destroys the request but never closes the response (what it held would be held for ever, and a
 * drain would wait for it): it is closed here instead, once the connection has. Returns how many
 * wait on the connection now.
 */
function closeWithConnection(socket: Socket, res: ServerResponse, settle: () => void): number {
  let queued = queuedResponses.get(socket);
  if (queued === undefined) {
    const all = new Set<() => void>();
    queued = all;
    queuedResponses.set(socket, all);
    socket.once('close', () => {
      for (const close of all) close();
    });
  }
  const close = () => {
    if (res.socket !== null) return;
    res.destroy();
    settle();
  };
  queued.add(close);
  const mine = queued;
  res.once('close', () => mine.delete(close));
  return queued.size;
}

function serveRequest(
  runtime: Runtime,
  budget: BodyBudget,
  req: IncomingMessage,
  res: ServerResponse,
  trace: Trace,
  log: Logger,
  metrics: Metrics,
  holds: SourceHolds,
): void {
  // A request deferred by a hold whose client has gone meanwhile.
  if (res.destroyed) return;
  // Node keeps MAX_HEADERS + 1 and drops the rest unseen: with a trusted proxy appending
  // X-Forwarded-For last, a client's own copy sent first would win. Refused outright.
  if (req.rawHeaders.length > 2 * MAX_HEADERS) return refuseTransport(res, metrics, transport.tooManyHeaders);
  runtime.cors.decorate(req, res);
  // Bodies are read only for POST, and only with a declared length: one that is not read is
  // never drained either, its connection closes with the answer.
  const declaresBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (req.method === 'OPTIONS') {
    if (declaresBody) res.shouldKeepAlive = false;
    return runtime.cors.preflight(req, res);
  }
  if (req.headers.upgrade?.toLowerCase() === 'websocket') return refuseTransport(res, metrics, transport.webSocketRefused);
  if (req.method !== 'POST') return refuseTransport(res, metrics, transport.methodNotAllowed, { allow: 'POST, OPTIONS' });
  if (!isJsonContentType(req.headers['content-type'])) {
    return refuseTransport(res, metrics, transport.unsupportedMediaType);
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return refuseTransport(res, metrics, transport.unsupportedEncoding);
  }
  if (req.headers['transfer-encoding'] !== undefined) return refuseTransport(res, metrics, transport.lengthRequired);
  const cap = runtime.maxBodyBytes;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > cap) return refuseTransport(res, metrics, bodyTooLarge(cap));
  admitUnread(runtime, budget, req, res, declared, trace, log, metrics, holds, (peer, body) =>
    handleBody(runtime, peer, res, body, log, metrics, trace, holds),
  );
}

/**
 * What a body costs is settled before a byte of it is read: its declared length is charged to
 * the process's body budget (503 when it does not fit, 429 past the source's share) and to the chain's `admitBody` (rate-limit's
 * tokens per 4 KiB: 429), either refusal answered with the body unread and the connection closed.
 * Only then is "100 Continue" sent (to a client that asked) and the body read; the budget gets
 * its bytes back once the body has been read and parsed, or the request ended first.
 */
function admitUnread(
  runtime: Runtime,
  budget: BodyBudget,
  req: IncomingMessage,
  res: ServerResponse,
  declared: number,
  trace: Trace,
  log: Logger,
  metrics: Metrics,
  holds: SourceHolds,
  then: (peer: RequestContext['peer'], body: Buffer) => void,
): void {
  // An ordinary call's body is never refused by the budget, nor counted in a source's share: its
  // source is not worked out on the hot path. A trusted proxy's body counts for its client.
  const peer = peerOf(req);
  const source = declared > SMALL_BODY_BYTES ? bodySource(runtime, peer) : null;
  const release = budget.take(declared, runtime.config.maxBodyBytesInFlight, source, runtime.maxBodyBytes);
  if (typeof release !== 'function') {
    return refuseTransport(res, metrics, release === 'source' ? transport.bodyBudgetSource : transport.bodyBudget, {
      'retry-after': BODY_BUDGET_RETRY_SECONDS,
    });
  }
  trace.releaseBody = release;
  const read = () => {
    if (res.destroyed) return release();
    if (awaitingContinue.has(req)) res.writeContinue();
    // Only a body the budget counts is cut when it stalls: a small one costs no timer (request_ms bounds it).
    const idleMs = declared > SMALL_BODY_BYTES ? runtime.config.clientTimeouts.bodyIdleMs : undefined;
    readBody(req, runtime.maxBodyBytes, idleMs, (body) => {
      if (body === STALLED) {
        release();
        return refuseTransport(res, metrics, transport.bodyStalled);
      }
      if (body === undefined) {
        release();
        return refuseTransport(res, metrics, bodyTooLarge(runtime.maxBodyBytes));
      }
      then(peer, body);
      // Parsed (synchronously) by now: the buffer is garbage, whatever the chain does next.
      release();
    });
  };
  const refuse = (verdict: Answer) => {
    release();
    closeUnread(res);
    answer(res, null, verdict, holds);
  };
  const admitted = runtime.chain.admitBody(peer, declared);
  if (admitted === undefined) return read();
  if (admitted instanceof Promise) {
    admitted.then(
      (verdict) => (verdict === undefined ? read() : refuse(verdict)),
      (err: unknown) => refuse({ error: toRpcError(err, log, 'body') }),
    );
  } else refuse(admitted);
}

/** The source a large body counts against in the budget: its peer's, or behind a trusted proxy, its client's. */
function bodySource(runtime: Runtime, peer: RequestContext['peer']): string | null {
  const source = peerSource(peer.address, runtime.peerSourceOf);
  return source ?? runtime.chain.requestSource(peer) ?? null;
}

/** What a client refused for the body budget is told to wait: bodies being received finish within a request timeout. */
const BODY_BUDGET_RETRY_SECONDS = '1';

/** Requests that sent `Expect: 100-continue` and have not been told to go on yet. */
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * `Expect: 100-continue`: Node would send "100 Continue" before any check, inviting a body the
 * ingress is about to refuse. It is sent only once the body is about to be read: every transport
 * check passed, and the body budget and the chain's `admitBody` took its declared length; any
 * other request gets its refusal straight away.
 */
export function createContinueListener(onRequest: (req: IncomingMessage, res: ServerResponse) => void) {
  return function onCheckContinue(req: IncomingMessage, res: ServerResponse): void {
    awaitingContinue.add(req);
    onRequest(req, res);
  };
}

/** An `Expect` other than 100-continue: 417 with a JSON body, like every transport refusal (Node's own has none). */
export function createExpectationListener(metrics: Metrics) {
  return function onCheckExpectation(_req: IncomingMessage, res: ServerResponse): void {
    refuseTransport(res, metrics, transport.expectationFailed);
  };
}

function handleBody(
  runtime: Runtime,
  peer: RequestContext['peer'],
  res: ServerResponse,
  body: Buffer,
  log: Logger,
  metrics: Metrics,
  trace: Trace,
  holds: RefusalHolds | undefined,
): void {
  let message: unknown;
  try {
    message = parseBody(body);
  } catch {
    metrics.bodyRefused('parse_error');
    return send(res, formatResponse(null, { error: errors.parseError() }));
  }
  if (Array.isArray(message)) {
    metrics.bodyRefused('batch');
    return refuseBatch(runtime, res, message);
  }
  const envelope = readRequest(message);
  if (!envelope.ok) {
    metrics.bodyRefused('invalid_request');
    return send(res, formatResponse(envelope.id, { error: envelope.error }));
  }

  const { request } = envelope;
  trace.method = request.method;
  trace.started = performance.now();
  const ctx: RequestContext = { request, peer, facts: new Facts() };
  trace.facts = ctx.facts;
  if (trace.local !== undefined) ctx.facts.set(SUBSCRIBER, true);
  // Closed while the body was being admitted: its close has been handled without these facts.
  if (res.destroyed) ctx.facts.set(CLOSED, true);
  const finish = (verdict: Verdict) => {
    // The client left while a plugin was deciding: nobody to answer or stream to (an answer
    // written into a closed response would hold its upstream connection waiting for a drain).
    if (res.destroyed) return;
    if (verdict !== undefined) {
      trace.outcome = 'error' in verdict ? 'refused' : 'answered';
      return answer(res, request.id, verdict, holds);
    }
    const local = trace.local?.(request);
    if (local !== undefined) {
      trace.outcome = 'error' in local ? 'refused' : 'answered';
      return answer(res, request.id, local, holds);
    }
    // An answer that cannot change, kept (src/cache/): priced above as any read, answered here.
    const rule = runtime.cache?.ruleFor(request);
    const kept = rule === undefined ? undefined : runtime.cache!.answer(rule, request.id, sourceOf());
    if (kept !== undefined) {
      trace.outcome = 'answered';
      return void sendAnswer(kept);
    }
    // Another instance of the fleet may have kept it (cache.shared): asked before the EL.
    if (rule !== undefined && runtime.cache!.shared) {
      return void runtime
        .cache!.sharedAnswer(rule, request.id, sourceOf())
        .then((shared) => {
          if (res.destroyed) return;
          if (shared === undefined) return ask(rule);
          trace.outcome = 'answered';
          sendAnswer(shared);
        })
        .catch(fail);
    }
    ask(rule);
  };
  /** The rest of a read's way, once no kept answer has come: shared, or asked of the EL. */
  const ask = (rule: CacheRule | undefined) => {
    trace.outcome = 'proxied';
    const forward = () => {
      trace.cancelUpstream = runtime.execution.stream(
        canonicalBody(request),
        res,
        streamed,
        runtime.config.clientTimeouts.readStallMs,
        runtime.readAnswered,
      );
    };
    // The same read already at the EL: its answer, with this request's id (src/cache/in-flight.ts).
    const shared = rule === undefined ? runtime.inFlightReads?.keyOf(request) : undefined;
    if (shared !== undefined && runtime.inFlightReads!.follow(shared, (answer) => followed(answer, forward))) return;
    const settle = shared === undefined ? undefined : runtime.inFlightReads!.lead(shared);
    const keep =
      rule === undefined && settle === undefined
        ? undefined
        : (bytes: Buffer | undefined) => {
            if (rule !== undefined && bytes !== undefined) runtime.cache!.offer(rule, bytes, sourceOf());
            settle?.(bytes);
          };
    if (!GAS_HEAVY_METHODS.has(request.method)) {
      trace.cancelUpstream = runtime.execution.stream(
        canonicalBody(request),
        res,
        (err, declaredBytes) => {
          // An answer not kept (too large, failed, cut): the followers ask for themselves.
          settle?.(undefined);
          streamed(err, declaredBytes);
        },
        runtime.config.clientTimeouts.readStallMs,
        runtime.readAnswered,
        false,
        keep,
      );
      return;
    }
    // Gas-heavy: a turn on one of the two lanes kept for them (never holding the other reads'
    // connections), by the EL time each source used (el-turns.ts); its EL time goes to whoever
    // charges for it; once the EL has the call it outlives its client (the EL computes on), and
    // what the source holds waits for it.
    trace.elPending = true;
    const elSettled = () => {
      trace.elPending = false;
      const afterEl = trace.afterEl;
      trace.afterEl = undefined;
      afterEl?.();
    };
    const charge = ctx.facts.get(EL_TIME);
    runtime.elTurns.take({
      source: sourceOf(),
      target: callTarget(request.method, request.params),
      // The gas of every run: an estimate at 2,000,000 gas may run the call a dozen times.
      gas: (ctx.facts.get(CALL_GAS) ?? requestGas(request.method, request.params, DEFAULT_RPC_GAS_CAP)) * runsOf(request.method),
      gone: () => res.destroyed,
      dropped: elSettled,
      start: (lane, ended) => {
        const started = performance.now();
        let elMs: number | undefined;
        trace.cancelUpstream = runtime[lane].stream(
          canonicalBody(request),
          res,
          (err, declaredBytes) => {
            // An answer that never began (the EL failed, or the call was cut) ends the turn here.
            ended(elMs ?? performance.now() - started);
            elSettled();
            streamed(err, declaredBytes);
          },
          runtime.config.clientTimeouts.readStallMs,
          (ms) => {
            elMs = ms;
            // Time the EL held the call (anvil sealing a block) is not the source's to pay for.
            if (!runtime.elTurns.held(started, ms)) charge?.(ms);
            // The EL has computed the answer: the turn is over, whatever the client's pace of
            // reading it (which holds one of the lane pool's spare connections, not the turn).
            ended(ms);
          },
          true,
          keep,
        );
      },
    });
  };
  /** The request's source, as rate-limit names it (else the peer's): asked only when needed. */
  const sourceOf = () => ctx.facts.get(SOURCE) ?? peerSource(peer.address, runtime.peerSourceOf) ?? peer.address;
  const sendAnswer = (answer: Buffer) => {
    trace.streamedBytes = answer.length;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  };
  const followed = (answer: Buffer | undefined, forward: () => void) => {
    if (res.destroyed) return;
    const mine = answer === undefined ? undefined : withId(answer, request.id);
    if (mine === undefined) return forward();
    trace.streamedBytes = mine.length;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': mine.length });
    res.end(mine);
  };
  const streamed = (err: unknown, declaredBytes: number) => {
    if (err !== undefined) return fail(err);
    trace.streamedBytes = declaredBytes;
    metrics.streamedBytes(declaredBytes);
  };
  const fail = (err: unknown) => {
    trace.outcome = 'error';
    // Once the answer has started, or the client has gone, there is nobody to tell: cut it.
    if (res.headersSent || res.destroyed) return void res.destroy();
    answer(res, request.id, { error: toRpcError(err, log, request.method) }, holds);
  };
  try {
    const verdict = runtime.chain.run(ctx);
    if (verdict instanceof Promise) verdict.then(finish, fail);
    else finish(verdict);
  } catch (err) {
    fail(err);
  }
}

/**
 * UTF-8 and JSON, without the stack trace V8 captures for the error either throws on a malformed
 * body (never shown; the client gets -32700): that capture was ~20% of the CPU a malformed
 * request costs.
 */
function parseBody(body: Buffer): unknown {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return JSON.parse(utf8.decode(body));
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function refuseBatch(runtime: Runtime, res: ServerResponse, elements: readonly unknown[]): void {
  // JSON-RPC 2.0: an empty array is answered with one error object, not an empty array.
  const answers = elements.length === 0 ? undefined : runtime.chain.handleBatch(elements);
  if (answers === undefined) return send(res, formatResponse(null, { error: errors.batchRefused() }));
  send(res, `[${answers.map(({ id, answer }) => formatResponse(id, answer)).join(',')}]`);
}

const peerOf = (req: IncomingMessage): RequestContext['peer'] => ({
  address: req.socket.remoteAddress ?? '',
  headers: req.headers,
  path: req.url,
});

function toRpcError(err: unknown, log: Logger, method: string): RpcError {
  if (err instanceof RpcFailure) return err.rpc;
  log.error('unexpected error while handling a request', { method, ...describeError(err) });
  return errors.internal();
}

/** With `holds`, a refusal's `holdMs` holds its source (refusal-hold.ts). */
function answer(res: ServerResponse, id: RpcId, answer: Answer, holds?: RefusalHolds): void {
  if (!('error' in answer)) return send(res, formatResponse(id, answer));
  const { httpStatus, retryAfterMs, holdMs } = answer.error;
  if (retryAfterMs !== undefined && !res.headersSent) res.setHeader('retry-after', String(Math.ceil(retryAfterMs / 1000)));
  const body = formatResponse(id, answer);
  if (holdMs === undefined || holds === undefined || res.headersSent) return send(res, body, httpStatus);
  holds.refuse(res, holdMs, () => send(res, body, httpStatus));
}

function send(res: ServerResponse, body: string, status = 200): void {
  if (res.headersSent || res.destroyed) return;
  sentBodies.set(res, body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** What the ingress answered itself, per response: the access log reads its code and size. */
const sentBodies = new WeakMap<ServerResponse, string>();

/** One request's access log line, built only when it is written. */
function accessEntry(
  runtime: Runtime,
  req: IncomingMessage,
  res: ServerResponse,
  trace: Trace,
  requestId: string | undefined,
  receivedAt: number,
): AccessEntry {
  const body = sentBodies.get(res);
  return {
    request_id: requestId,
    source: trace.facts?.get(SOURCE) ?? runtime.chain.requestSource(peerOf(req)) ?? req.socket.remoteAddress ?? '',
    method: trace.method ?? null,
    status: res.statusCode,
    code: errorCodeOf(body),
    bytes: body === undefined ? trace.streamedBytes : Buffer.byteLength(body),
    ms: Math.round((performance.now() - receivedAt) * 1000) / 1000,
  };
}

/** The JSON-RPC error body every transport refusal carries, for humans with curl. */
export function transportBody(refusal: TransportRefusal): string {
  return formatResponse(null, { error: { code: INVALID_REQUEST, message: refusal.message } });
}

/** Transport refusals carry a JSON-RPC error body too, are counted by reason, and close the connection. */
function refuseTransport(res: ServerResponse, metrics: Metrics, refusal: TransportRefusal, headers: Record<string, string> = {}): void {
  metrics.transportRefused(refusal.reason);
  const body = transportBody(refusal);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  closeUnread(res);
  send(res, body, refusal.status);
}

/**
 * The rest of the body (if any) is not read: the connection cannot be reused, and it is closed
 * as soon as the answer is written, not after Node has read (to discard) whatever of the body
 * arrived meanwhile (a source refused ~600 times in 2 s with 510 KB bodies had it read most of
 * each; test/e2e/connections.test.ts, F6).
 */
function closeUnread(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.once('finish', () => res.req.socket.destroy());
}

/** What `readBody` reports for a body that brought no byte for its idle time. */
const STALLED = Symbol('stalled');

/**
 * Collects the body up to `cap` bytes; calls back with undefined once the cap is passed, and with
 * STALLED once no byte has come for `idleMs`, when given (a body withheld must not hold the budget
 * for the whole request timeout, like nginx's client_body_timeout).
 */
function readBody(
  req: IncomingMessage,
  cap: number,
  idleMs: number | undefined,
  done: (body: Buffer | undefined | typeof STALLED) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const stop = () => {
    if (idle === undefined) return void req.off('data', onData).off('end', onEnd);
    clearTimeout(idle);
    req.off('data', onData).off('end', onEnd).off('close', stop);
  };
  const idle =
    idleMs === undefined
      ? undefined
      : setTimeout(() => {
          stop();
          done(STALLED);
        }, idleMs);
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > cap) {
      stop();
      done(undefined);
      return;
    }
    chunks.push(chunk);
    idle?.refresh();
  };
  const onEnd = () => {
    stop();
    done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  };
  // A client that goes away mid-body only ends its own request; 'close' on the response cleans
  // up (and on the request, the idle timer). (An IncomingMessage emits 'error' only to listeners
  // it has, so none is needed.)
  req.on('data', onData).on('end', onEnd);
  if (idle !== undefined) req.once('close', stop);
}
