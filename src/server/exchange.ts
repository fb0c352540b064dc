/**
 * One request's way through the server, named once (`Exchange`), and how the ingress answers on
 * it: the trace its response's one 'close' listener settles, the answers the ingress writes itself
 * (JSON-RPC bodies, transport refusals, kept answers) and the mapping of what a step threw.
 */
import type { ServerResponse } from 'node:http';
import { errors, INVALID_REQUEST, RpcFailure, type RpcError, type TransportRefusal } from '../errors.js';
import { CLOSED, type Facts } from '../facts.js';
import { formatResponse, type Answer, type RpcId, type RpcRequest } from '../jsonrpc.js';
import { describeError, type Logger } from '../log.js';
import type { Metrics, Outcome } from '../metrics.js';
import type { RefusalHolds } from '../refusal-hold.js';
import type { RequestTab } from '../request-tab.js';
import type { Runtime } from '../runtime.js';

/** What one request's single 'close' listener reports: its method, once read, and outcome. */
export interface Trace {
  method: string | undefined;
  outcome: Outcome;
  started: number;
  /** Releases the upstream request of an answer still streaming. */
  cancelUpstream: (() => void) | undefined;
  /** The request's facts and tab, once it has been read: what plugins hold for it is released on close. */
  facts: Facts | undefined;
  tab: RequestTab | undefined;
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

/** One request and what answers it, from its headers to its last byte. */
export interface Exchange {
  /** The runtime the request arrived under (a reload does not move it). */
  readonly runtime: Runtime;
  /** A WebSocket message's is a `MessageSink` (websocket.ts) standing in for it. */
  readonly res: ServerResponse;
  readonly trace: Trace;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Where a refusal past its source's allowance holds the connection (refusal-hold.ts). */
  readonly holds: RefusalHolds | undefined;
}

/** A request's trace before it is read: until an answer is decided, a client that leaves counts as abandoned. */
export function newTrace(local: Trace['local'] = undefined): Trace {
  return {
    method: undefined,
    outcome: 'abandoned',
    started: 0,
    cancelUpstream: undefined,
    facts: undefined,
    tab: undefined,
    releaseBody: undefined,
    elPending: false,
    afterEl: undefined,
    streamedBytes: 0,
    local,
  };
}

/** What a request holds, given back once its answer is written or cut (the request path's one 'close' listener). */
export function settleTrace({ runtime, res, trace, metrics }: Exchange): void {
  // An answer still streaming from the EL is abandoned.
  if (!res.writableFinished) trace.cancelUpstream?.();
  trace.releaseBody?.();
  if (trace.facts !== undefined && trace.tab !== undefined) {
    const tab = trace.tab;
    // A gas-heavy call the client left is still computing on the EL: its source's slots are
    // given back when the EL has answered, not now.
    if (trace.elPending) trace.afterEl = () => tab.close();
    else tab.close();
    if (!trace.facts.get(CLOSED)) trace.facts.set(CLOSED, true);
  }
  runtime.leave();
  if (trace.method !== undefined) metrics.request(trace.method, trace.outcome, (performance.now() - trace.started) / 1000);
}

export function toRpcError(err: unknown, log: Logger, method: string): RpcError {
  if (err instanceof RpcFailure) return err.rpc;
  log.error('unexpected error while handling a request', { method, ...describeError(err) });
  return errors.internal();
}

/** A refusal's `holdMs` holds its source, where the exchange has holds (refusal-hold.ts). */
export function answer({ res, holds }: Exchange, id: RpcId, answer: Answer): void {
  if (!('error' in answer)) return send(res, formatResponse(id, answer));
  const { httpStatus, retryAfterMs, holdMs } = answer.error;
  if (retryAfterMs !== undefined && !res.headersSent) res.setHeader('retry-after', String(Math.ceil(retryAfterMs / 1000)));
  const body = formatResponse(id, answer);
  if (holdMs === undefined || holds === undefined || res.headersSent) return send(res, body, httpStatus);
  holds.refuse(res, holdMs, () => send(res, body, httpStatus));
}

/** What a step threw, answered; once the answer has started, or the client has gone, the response is cut. */
export function fail(ex: Exchange, request: RpcRequest, err: unknown): void {
  ex.trace.outcome = 'error';
  if (ex.res.headersSent || ex.res.destroyed) return void ex.res.destroy();
  answer(ex, request.id, { error: toRpcError(err, ex.log, request.method) });
}

export function send(res: ServerResponse, body: string, status = 200): void {
  if (res.headersSent || res.destroyed) return;
  sentBodies.set(res, body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** An answer the EL gave before (kept, or shared), its bytes with this request's id. */
export function sendKept({ res, trace }: Exchange, bytes: Buffer): void {
  trace.streamedBytes = bytes.length;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}

/** What the ingress answered itself, per response: the access log reads its code and size. */
const sentBodies = new WeakMap<ServerResponse, string>();

export const sentBody = (res: ServerResponse): string | undefined => sentBodies.get(res);

/** The JSON-RPC error body every transport refusal carries, for humans with curl. */
export function transportBody(refusal: TransportRefusal): string {
  return formatResponse(null, { error: { code: INVALID_REQUEST, message: refusal.message } });
}

/** Transport refusals carry a JSON-RPC error body too, are counted by reason, and close the connection. */
export function refuseTransport(
  res: ServerResponse,
  metrics: Metrics,
  refusal: TransportRefusal,
  headers: Record<string, string> = {},
): void {
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
export function closeUnread(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.once('finish', () => res.req.socket.destroy());
}
