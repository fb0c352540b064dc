/**
 * The HTTP face of the ingress: transport checks, one JSON-RPC request per POST, the plugin
 * chain, then either the chain's answer or the EL's answer streamed through.
 *
 *   POST ─► transport (405/415/413) ─► JSON (-32700) ─► array? batch refusal
 *        ─► envelope (-32600) ─► plugin chain ─► Answer ──────────► JSON-RPC response
 *                                              └► pass ─► stream to EL ─► piped response
 *
 * This handler never throws: every path ends in exactly one response (or, once an upstream
 * answer has started streaming, a cut connection).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GAS_HEAVY_METHODS } from './call-gas.js';
import { bodyTooLarge, errors, INVALID_REQUEST, RpcFailure, transport, type RpcError, type TransportRefusal } from './errors.js';
import { CLOSED, EL_TIME, Facts, ON_CLOSE } from './facts.js';
import { canonicalBody, formatResponse, isJsonContentType, readRequest, type Answer, type RpcId } from './jsonrpc.js';
import { describeError, type Logger } from './log.js';
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
}

/**
 * `onSettled` is called once per request when its response has closed (finished or cut),
 * whichever path it took: the ingress counts in-flight requests with it for the drain.
 */
export function createRequestListener(current: () => Runtime, log: Logger, metrics: Metrics, onSettled: () => void) {
  return function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const runtime = current();
    // Until an answer is decided, a request whose client leaves counts as abandoned.
    const trace: Trace = { method: undefined, outcome: 'abandoned', started: 0, cancelUpstream: undefined, facts: undefined };
    runtime.enter();
    // One listener per request does all the bookkeeping (listeners are measurable at this rate;
    // a response closes once, so no once() wrapper either).
    res.on('close', () => {
      // An answer still streaming from the EL is abandoned.
      if (!res.writableFinished) trace.cancelUpstream?.();
      if (trace.facts !== undefined) {
        trace.facts.get(ON_CLOSE)?.();
        if (!trace.facts.get(CLOSED)) trace.facts.set(CLOSED, true);
      }
      runtime.leave();
      if (trace.method !== undefined) metrics.request(trace.method, trace.outcome, (performance.now() - trace.started) / 1000);
      onSettled();
    });
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
    if (Number(req.headers['content-length']) > cap) return refuseTransport(res, metrics, bodyTooLarge(cap));

    readBody(req, cap, (body) => {
      if (body === undefined) return refuseTransport(res, metrics, bodyTooLarge(cap));
      const peer = peerOf(req);
      const admitted = runtime.chain.admitBody(peer, body.length);
      if (admitted === undefined) return handleBody(runtime, peer, res, body, log, metrics, trace);
      const settle = (verdict: Verdict) =>
        verdict === undefined ? handleBody(runtime, peer, res, body, log, metrics, trace) : answer(res, null, verdict);
      if (admitted instanceof Promise) admitted.then(settle, (err: unknown) => answer(res, null, { error: toRpcError(err, log, 'body') }));
      else settle(admitted);
    });
  };
}

/**
 * `Expect: 100-continue`: Node would send "100 Continue" before any check, inviting a body the
 * ingress is about to refuse. It is sent only for a request whose body would be read (POST, JSON,
 * uncompressed, a declared length within the cap); any other gets its refusal straight away.
 */
export function createContinueListener(current: () => Runtime, onRequest: (req: IncomingMessage, res: ServerResponse) => void) {
  return function onCheckContinue(req: IncomingMessage, res: ServerResponse): void {
    const length = req.headers['content-length'];
    const encoding = req.headers['content-encoding'];
    const readable =
      req.method === 'POST' &&
      isJsonContentType(req.headers['content-type']) &&
      (encoding === undefined || encoding.toLowerCase() === 'identity') &&
      req.headers['transfer-encoding'] === undefined &&
      length !== undefined &&
      Number(length) <= current().maxBodyBytes;
    if (readable) res.writeContinue();
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
  // Closed while the body was being admitted: its close has been handled without these facts.
  if (res.destroyed) ctx.facts.set(CLOSED, true);
  const finish = (verdict: Verdict) => {
    // The client left while a plugin was deciding: nobody to answer or stream to (an answer
    // written into a closed response would hold its upstream connection waiting for a drain).
    if (res.destroyed) return;
    if (verdict !== undefined) {
      trace.outcome = 'error' in verdict ? 'refused' : 'answered';
      return answer(res, request.id, verdict);
    }
    trace.outcome = 'proxied';
    // Gas-heavy reads wait for the EL connections kept for them, never holding the others, and
    // their EL time is reported to whoever charges for it.
    const heavy = GAS_HEAVY_METHODS.has(request.method);
    trace.cancelUpstream = (heavy ? runtime.heavy : runtime.execution).stream(
      canonicalBody(request),
      res,
      (err, declaredBytes) => {
        if (err !== undefined) return fail(err);
        metrics.streamedBytes(declaredBytes);
      },
      runtime.config.clientTimeouts.readStallMs,
      heavy ? ctx.facts.get(EL_TIME) : undefined,
    );
  };
  const fail = (err: unknown) => {
    trace.outcome = 'error';
    // Once the answer has started, or the client has gone, there is nobody to tell: cut it.
    if (res.headersSent || res.destroyed) return void res.destroy();
    answer(res, request.id, { error: toRpcError(err, log, request.method) });
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

const peerOf = (req: IncomingMessage): RequestContext['peer'] => ({ address: req.socket.remoteAddress ?? '', headers: req.headers });

function toRpcError(err: unknown, log: Logger, method: string): RpcError {
  if (err instanceof RpcFailure) return err.rpc;
  log.error('unexpected error while handling a request', { method, ...describeError(err) });
  return errors.internal();
}

function answer(res: ServerResponse, id: RpcId, answer: Answer): void {
  if (!('error' in answer)) return send(res, formatResponse(id, answer));
  const { httpStatus, retryAfterMs } = answer.error;
  if (retryAfterMs !== undefined && !res.headersSent) res.setHeader('retry-after', String(Math.ceil(retryAfterMs / 1000)));
  send(res, formatResponse(id, answer), httpStatus);
}

function send(res: ServerResponse, body: string, status = 200): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The JSON-RPC error body every transport refusal carries, for humans with curl. */
export function transportBody(refusal: TransportRefusal): string {
  return formatResponse(null, { error: { code: INVALID_REQUEST, message: refusal.message } });
}

/** Transport refusals carry a JSON-RPC error body too, are counted by reason, and close the connection. */
function refuseTransport(res: ServerResponse, metrics: Metrics, refusal: TransportRefusal, headers: Record<string, string> = {}): void {
  metrics.transportRefused(refusal.reason);
  const body = transportBody(refusal);
  // The rest of the body (if any) is not read: the connection cannot be reused.
  res.shouldKeepAlive = false;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  send(res, body, refusal.status);
}

/** Collects the body up to `cap` bytes; calls back with undefined once the cap is passed. */
function readBody(req: IncomingMessage, cap: number, done: (body: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > cap) {
      req.off('data', onData).off('end', onEnd);
      done(undefined);
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  // A client that goes away mid-body only ends its own request; 'close' on the response cleans
  // up. (An IncomingMessage emits 'error' only to listeners it has, so none is needed.)
  req.on('data', onData).on('end', onEnd);
}
