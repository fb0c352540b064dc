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
import { type AccessEntry, errorCodeOf, requestIdOf } from '../access-log.js';
import { BodyBudget, SMALL_BODY_BYTES } from '../body-budget.js';
import { bodyTooLarge, errors, transport } from '../errors.js';
import { CLOSED, Facts, SOURCE, SUBSCRIBER } from '../facts.js';
import { formatResponse, isJsonContentType, readRequest, type Answer, type RpcRequest } from '../jsonrpc.js';
import type { Logger } from '../log.js';
import type { MessageSink } from '../message-sink.js';
import type { Metrics } from '../metrics.js';
import type { RequestContext, Verdict } from '../plugin.js';
import type { RefusalHolds, SourceHolds } from '../refusal-hold.js';
import { RequestTab } from '../request-tab.js';
import type { Runtime } from '../runtime.js';
import { peerSource } from '../source-connections.js';
import { parseBody, readBody, STALLED } from './body.js';
import {
  answer,
  closeUnread,
  fail,
  newTrace,
  refuseTransport,
  send,
  sentBody,
  settleTrace,
  toRpcError,
  type Exchange,
} from './exchange.js';
import { answerRead } from './read-path.js';

export { transportBody } from './exchange.js';

/** Request headers a client may send; the server keeps one more so that a longer list shows. */
export const MAX_HEADERS = 100;

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
    return { waiting: elTurns.queued, quick: elTurns.runningOn('quick'), heavy: elTurns.runningOn('heavy'), sources: elTurns.remembered };
  };
  return function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const runtime = current();
    const ex: Exchange = { runtime, res, trace: newTrace(), log, metrics, holds };
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
      settleTrace(ex);
      accessLog?.(() => accessEntry(ex, req, requestId, receivedAt));
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
    if (heldFor > 0) return holds.defer(req.socket, heldFor, () => serveRequest(ex, budget, req));
    serveRequest(ex, budget, req);
  };
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
  const ex: Exchange = { runtime, res: sink as unknown as ServerResponse, trace: newTrace(local), log, metrics, holds };
  runtime.enter();
  sink.once('close', () => settleTrace(ex));
  handleBody(ex, peer, body);
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

function serveRequest(ex: Exchange, budget: BodyBudget, req: IncomingMessage): void {
  const { runtime, res, metrics } = ex;
  // A request deferred by a hold whose client has gone meanwhile.
  if (res.destroyed) return;
  // Node keeps MAX_HEADERS + 1 and drops the rest unseen: with a trusted proxy appending
  // X-Forwarded-For last, a client's own copy sent first would win. Refused outright.
  if (req.rawHeaders.length > 2 * MAX_HEADERS) return refuseTransport(res, metrics, transport.tooManyHeaders);
  runtime.cors.decorate(req, res);
  const { headers } = req;
  // Bodies are read only for POST, and only with a declared length: one that is not read is
  // never drained either, its connection closes with the answer.
  const chunked = headers['transfer-encoding'] !== undefined;
  const declared = Number(headers['content-length'] ?? 0);
  if (req.method === 'OPTIONS') {
    if (chunked || declared > 0) res.shouldKeepAlive = false;
    return runtime.cors.preflight(req, res);
  }
  if (headers.upgrade?.toLowerCase() === 'websocket') return refuseTransport(res, metrics, transport.webSocketRefused);
  if (req.method !== 'POST') return refuseTransport(res, metrics, transport.methodNotAllowed, { allow: 'POST, OPTIONS' });
  if (!isJsonContentType(headers['content-type'])) {
    return refuseTransport(res, metrics, transport.unsupportedMediaType);
  }
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return refuseTransport(res, metrics, transport.unsupportedEncoding);
  }
  if (chunked) return refuseTransport(res, metrics, transport.lengthRequired);
  const cap = runtime.maxBodyBytes;
  if (declared > cap) return refuseTransport(res, metrics, bodyTooLarge(cap));
  admitUnread(ex, budget, req, declared, (peer, body) => handleBody(ex, peer, body));
}

/**
 * What a body costs is settled before a byte of it is read: its declared length is charged to
 * the process's body budget (503 when it does not fit, 429 past the source's share) and to the chain's `admitBody` (rate-limit's
 * tokens per 4 KiB: 429), either refusal answered with the body unread and the connection closed.
 * Only then is "100 Continue" sent (to a client that asked) and the body read; the budget gets
 * its bytes back once the body has been read and parsed, or the request ended first.
 */
function admitUnread(
  ex: Exchange,
  budget: BodyBudget,
  req: IncomingMessage,
  declared: number,
  then: (peer: RequestContext['peer'], body: Buffer) => void,
): void {
  const { runtime, res, metrics } = ex;
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
  ex.trace.releaseBody = release;
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
    answer(ex, null, verdict);
  };
  const admitted = runtime.chain.admitBody(peer, declared);
  if (admitted === undefined) return read();
  if (admitted instanceof Promise) {
    admitted.then(
      (verdict) => (verdict === undefined ? read() : refuse(verdict)),
      (err: unknown) => refuse({ error: toRpcError(err, ex.log, 'body') }),
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

function handleBody(ex: Exchange, peer: RequestContext['peer'], body: Buffer): void {
  const { runtime, res, trace, metrics } = ex;
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
  const ctx: RequestContext = { request, peer, facts: new Facts(), tab: new RequestTab() };
  trace.facts = ctx.facts;
  trace.tab = ctx.tab;
  if (trace.local !== undefined) ctx.facts.set(SUBSCRIBER, true);
  // Closed while the body was being admitted: its close has been handled without these facts.
  if (res.destroyed) {
    ctx.facts.set(CLOSED, true);
    ctx.tab.close();
  }
  const finish = (verdict: Verdict) => {
    // The client left while a plugin was deciding: nobody to answer or stream to (an answer
    // written into a closed response would hold its upstream connection waiting for a drain).
    if (res.destroyed) return;
    const answered = verdict ?? trace.local?.(request);
    if (answered === undefined) return answerRead(ex, ctx);
    trace.outcome = 'error' in answered ? 'refused' : 'answered';
    answer(ex, request.id, answered);
  };
  try {
    const verdict = runtime.chain.run(ctx);
    if (verdict instanceof Promise) verdict.then(finish, (err: unknown) => fail(ex, request, err));
    else finish(verdict);
  } catch (err) {
    fail(ex, request, err);
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

/** One request's access log line, built only when it is written. */
function accessEntry(
  { runtime, res, trace }: Exchange,
  req: IncomingMessage,
  requestId: string | undefined,
  receivedAt: number,
): AccessEntry {
  const body = sentBody(res);
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
