/**
 * The wire error catalogue: every JSON-RPC error the ingress itself emits, named by condition.
 *
 * The spec reuses -32000 and -32601 for several conditions (section 7), so callers never build
 * error objects from a bare code: they call the factory named for the condition. One factory per
 * condition also keeps "same condition, same bytes" true, e.g. an unauthorised `svc_nodeHealth`
 * and an unknown method both come from `methodNotFound()`.
 */
import { maxHeaderSize } from 'node:http';

/** A JSON-RPC error object as it goes on the wire, plus the HTTP status it travels with. */
export interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
  /** 200 unless the condition is a rate limit (429); see docs/errors.md "HTTP status policy". */
  readonly httpStatus?: number;
  /** Sent as the Retry-After header (rounded up to seconds) with a 429. */
  readonly retryAfterMs?: number;
  /**
   * How long the server reads nothing more from the refused source: it has been refused past its
   * allowance (rate-limit, src/refusal-hold.ts). Never sent.
   */
  readonly holdMs?: number;
}

function rpcError(code: number, message: string, data?: unknown): RpcError {
  return Object.freeze(data === undefined ? { code, message } : { code, message, data });
}

// JSON-RPC 2.0 standard codes.
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
// Ethereum server-error range (EIP-1474), as the spec uses it.
export const SERVER_ERROR = -32000;
export const LIMIT_EXCEEDED = -32005;
/** geth's code for a call or estimate that reverted, with the revert data as `data`. */
export const EXECUTION_REVERTED = 3;

const METHOD_NOT_FOUND_ERROR = rpcError(METHOD_NOT_FOUND, 'the method does not exist/is not available');
const POLL_INSTEAD = 'poll with eth_newFilter or eth_newBlockFilter and eth_getFilterChanges, or with eth_getLogs';
const BATCH_MESSAGE =
  'batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)';

const RATE_LIMITED_MESSAGES = {
  source: 'rate limited: too many requests from this source; retry later',
  host: 'rate limited: the endpoint is at capacity; retry later',
  'in-flight': 'rate limited: too many requests in flight from this source; retry later',
  'heavy-in-flight':
    'rate limited: too many eth_call, eth_estimateGas, eth_createAccessList or eth_simulateV1 requests in flight from this source; retry later',
} as const;

export const errors = {
  /** Body is not JSON. */
  parseError: () => rpcError(PARSE_ERROR, 'parse error: the body is not valid JSON'),
  /** Body is JSON but not a JSON-RPC 2.0 request object; `why` says which member is wrong. */
  invalidRequest: (why: string) => rpcError(INVALID_REQUEST, `invalid request: ${why}`),
  /** A request without an id would be executed with nobody to answer: refused, not run. */
  notificationRefused: () =>
    rpcError(INVALID_REQUEST, 'invalid request: notifications (requests without an id) are not supported; add an id'),
  /** One element of a refused batch, or the whole of an empty or unanswered one. */
  batchRefused: () => rpcError(INVALID_REQUEST, BATCH_MESSAGE),
  /** Unknown method, method outside the allowlist, operator method without a valid token. */
  methodNotFound: () => METHOD_NOT_FOUND_ERROR,
  /** eth_sendTransaction, eth_sign, eth_signTransaction, eth_signTypedData*: spec 4.5. */
  signingRefused: () =>
    rpcError(
      METHOD_NOT_FOUND,
      'the method is not supported: this endpoint holds no keys; sign in the client and use eth_sendRawTransaction',
    ),
  /** eth_subscribe, eth_unsubscribe: there is no connection to push on. */
  subscriptionsRefused: () => rpcError(METHOD_NOT_FOUND, `subscriptions are not supported yet: ${POLL_INSTEAD}`),
  /** svc_validateTransaction: spec 4.5 and 7. */
  notSupportedByIngress: (method: string) => rpcError(METHOD_NOT_FOUND, `the method ${method} is not supported by the ingress`),
  invalidParams: (why: string) => rpcError(INVALID_PARAMS, `invalid params: ${why}`),
  /** Raw transaction over the size limit: spec 4.3, message fixed by the spec; `data` states the limit. */
  oversizedTransaction: (maxBytes: number) => rpcError(INVALID_PARAMS, 'oversized transaction', { max_bytes: maxBytes }),
  /** The execution layer could not be reached, or it did not answer in time. */
  upstreamUnavailable: () => rpcError(INTERNAL_ERROR, 'upstream unavailable: the execution layer did not answer'),
  /** The execution layer answered something that is not a JSON-RPC response. */
  upstreamInvalid: () => rpcError(INTERNAL_ERROR, 'upstream error: the execution layer answered an invalid response'),
  /** The consensus node's local API could not be reached (node-local methods): never fabricated data. */
  nodeUnavailable: () => rpcError(INTERNAL_ERROR, 'node unavailable: the consensus node did not answer'),
  /** The submission target could not be reached: the submission was not forwarded. */
  submissionUnavailable: () => rpcError(INTERNAL_ERROR, 'submission unavailable: the transaction was not forwarded; retry later'),
  /** Spec 7: the same hash was admitted recently. */
  alreadyKnown: () => rpcError(SERVER_ERROR, 'already known'),
  /**
   * Spec 7: refused by the gate. `reason` is a stable code (frame-transactions.md's, or the
   * gate's own), `detail` a sentence, `extra` further `data` members (a VERIFY frame's index
   * and cause); a verdict answered from the cache says so.
   */
  rejected: (reason: string, detail: string, cached = false, extra?: Readonly<Record<string, unknown>>) =>
    // `reason` is the stable code clients branch on: set first (its place on the wire), and last (no extra member replaces it).
    rpcError(
      SERVER_ERROR,
      `rejected: ${detail}${cached ? ' (cached verdict)' : ''}`,
      Object.assign({ reason }, extra, { reason }, cached ? { cached } : {}),
    ),
  /** Spec 7: the execution layer's own validation refused it; its reason is carried verbatim. */
  rejectedByExecutionLayer: (reason: string, cached = false) =>
    rpcError(
      SERVER_ERROR,
      `rejected by the execution layer: ${reason}${cached ? ' (cached verdict)' : ''}`,
      cached ? { reason: 'el-rejected', cached } : { reason: 'el-rejected' },
    ),
  /**
   * Spec 7 and 8: over quota. `scope` says what ran dry: this source's own bucket, the
   * host-wide one, or the source's in-flight slots (`max_in_flight_per_source`: the next
   * request waits for one to close), or its slots for gas-heavy reads
   * (`max_heavy_in_flight_per_source`). HTTP 429 so that proxies and load balancers see it too.
   */
  rateLimited: (scope: keyof typeof RATE_LIMITED_MESSAGES, retryAfterMs: number, holdMs = 0): RpcError =>
    Object.freeze({
      code: LIMIT_EXCEEDED,
      message: RATE_LIMITED_MESSAGES[scope],
      data: { retry_after_ms: retryAfterMs },
      httpStatus: 429,
      retryAfterMs,
      ...(holdMs > 0 ? { holdMs } : {}),
    }),
  /**
   * A gas-heavy read its source's recent calls say would keep the EL longer than one call may
   * (`upstreams.max_call_ms`, or a block interval on an EL that seals under a lock: el-turns.ts):
   * HTTP 429, to be asked again with less gas or once the source's cost has faded.
   */
  callTooLong: (expectedMs: number, mostMs: number, retryAfterMs: number): RpcError =>
    Object.freeze({
      code: LIMIT_EXCEEDED,
      message:
        'rate limited: calls this large from this source lately kept the execution layer longer than one call may; ask for less gas or retry later',
      data: { retry_after_ms: retryAfterMs, expected_ms: Math.ceil(expectedMs), max_ms: Math.floor(mostMs) },
      httpStatus: 429,
      retryAfterMs,
    }),
  /**
   * An API key the endpoint does not know (rate-limit's api_keys): HTTP 401. A client refused
   * past its allowance of refusals is held as for a rate limit (`holdMs`).
   */
  unknownApiKey: (holdMs = 0): RpcError =>
    Object.freeze({
      code: SERVER_ERROR,
      message: 'unauthorized: unknown API key',
      httpStatus: 401,
      ...(holdMs > 0 ? { holdMs } : {}),
    }),
  /** eth_subscribe of a kind the ingress does not serve (websocket.ts). */
  subscriptionKindUnsupported: (kind: string) =>
    rpcError(
      INVALID_PARAMS,
      `invalid params: subscriptions of ${JSON.stringify(kind).slice(0, 64)} are not served: newHeads and logs only; ${POLL_INSTEAD}`,
    ),
  /**
   * A `logs` subscription's criteria refused as geth refuses them: one that does not parse names
   * its argument (geth counts the kind as argument 0); one geth's SubscribeLogs refuses is bare.
   */
  logCriteriaRefused: (message: string, parses: boolean) => rpcError(INVALID_PARAMS, parses ? message : `invalid argument 1: ${message}`),
  /** More subscriptions on one WebSocket connection, or from one source, than it may hold. */
  tooManySubscriptions: (max: number, scope: 'connection' | 'source' = 'connection') =>
    rpcError(
      LIMIT_EXCEEDED,
      scope === 'connection'
        ? `too many subscriptions on this connection (at most ${max}): unsubscribe one, or open another connection`
        : `too many subscriptions from this source (at most ${max}): unsubscribe one`,
    ),
  /** A WebSocket message's answer past what one message may carry (websocket.ts). */
  answerTooLarge: (maxBytes: number) =>
    rpcError(
      INTERNAL_ERROR,
      `the answer is larger than ${maxBytes} bytes, the most a WebSocket message carries here: ask over HTTP, where answers stream`,
    ),
  /** EIP-7966: forwarded, but no receipt within the timeout; `data` is the transaction hash. */
  syncTimeout: (hash: string) => rpcError(4, 'the transaction was ordered but not included within the timeout; wait for its receipt', hash),
  /** EIP-7966: a nonce ahead of the sender's next one is not accepted; `data` is the expected nonce. */
  syncNonceGap: (expected: bigint) =>
    rpcError(6, `nonce gap: the transaction was not accepted; the sender's next nonce is ${expected}`, `0x${expected.toString(16)}`),
  /** Spec 4.3: submissions must reach a validator; a follower without a relay refuses them. */
  followerRefusesSubmissions: () =>
    rpcError(SERVER_ERROR, 'submissions are not accepted by this node (a follower): send them to the public endpoint'),
  /** Spec 7: the gate could not read state or validate: it fails closed. */
  validationUnavailable: () => rpcError(INTERNAL_ERROR, 'validation unavailable: the ingress could not reach its execution layer'),
  /**
   * A frame transaction's estimate found a frame that reverts: as geth answers a reverted
   * eth_estimateGas (code 3, the revert data), the message naming the frame.
   */
  frameReverted: (message: string, data: string) => rpcError(EXECUTION_REVERTED, `execution reverted: ${message}`, data),
  /** A block asked for that the EL does not have: geth's words. */
  headerNotFound: () => rpcError(SERVER_ERROR, 'header not found'),
  /** geth's wording (public endpoints' `--rpc.rangelimit`), which range-splitting clients read. */
  blockRangeTooWide: (maxBlocks: number) => rpcError(SERVER_ERROR, `exceed maximum block range: ${maxBlocks}`),
  /** No estimate: a frame fails whatever its limits, or the transaction cannot be included. */
  frameEstimateFailed: (message: string) => rpcError(SERVER_ERROR, `gas estimation failed: ${message}`),
  /** A bug: the stack goes to the log, never to the client. */
  internal: () => rpcError(INTERNAL_ERROR, 'internal error'),
} as const;

/**
 * An error carried up the stack by code that cannot answer directly (a plugin's helper, the
 * upstream client). The server turns it into its `rpc` error; anything else thrown is a bug.
 */
export class RpcFailure extends Error {
  constructor(
    readonly rpc: RpcError,
    options?: { cause?: unknown },
  ) {
    super(rpc.message, options);
    this.name = 'RpcFailure';
  }
}

/** A refusal answered with an HTTP status because no JSON-RPC answer can be formed; `reason` labels it on /metrics. */
export interface TransportRefusal {
  readonly status: number;
  readonly reason: string;
  readonly message: string;
}

/** Transport refusals: answered with an HTTP status because no JSON-RPC answer can be formed. */
export const transport = {
  methodNotAllowed: { status: 405, reason: 'method_not_allowed', message: 'only POST is accepted' },
  /**
   * A WebSocket handshake that is not one (no key, another version, `Upgrade` without `Connection:
   * Upgrade`): before the 405 a GET would get, so a client learns what is missing.
   */
  webSocketRefused: {
    status: 400,
    reason: 'websocket',
    message:
      'incomplete WebSocket handshake: a client sends Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Key and Sec-WebSocket-Version: 13',
  },
  unsupportedMediaType: {
    status: 415,
    reason: 'unsupported_media_type',
    message: 'the body must be JSON sent as Content-Type: application/json',
  },
  unsupportedEncoding: { status: 415, reason: 'unsupported_encoding', message: 'compressed request bodies are not supported' },
  /** A chunked body is counted only as it arrives, one buffer per chunk: refused before any is read. */
  lengthRequired: {
    status: 411,
    reason: 'length_required',
    message: 'send the body with a Content-Length header (chunked request bodies are not accepted)',
  },
  /** Malformed HTTP, headers over the limit, or a client too slow to send its request (Node's own checks). */
  badRequest: { status: 400, reason: 'bad_request', message: 'malformed HTTP request' },
  headersTooLarge: { status: 431, reason: 'headers_too_large', message: `request headers too large (at most ${maxHeaderSize} bytes)` },
  /** Node keeps only the first headers it is told to: past them a proxy's X-Forwarded-For would be lost. */
  tooManyHeaders: { status: 431, reason: 'too_many_headers', message: 'too many request headers (at most 100)' },
  requestTimeout: { status: 408, reason: 'request_timeout', message: 'the request was not received in time' },
  /** No byte of a body for `client_timeouts.body_idle_ms`: it stops holding the body budget. */
  bodyStalled: { status: 408, reason: 'body_stalled', message: 'the request body stopped arriving' },
  /** The body budget (`max_body_bytes_in_flight`) cannot take the declared length: refused unread, Retry-After 1. */
  bodyBudget: {
    status: 503,
    reason: 'body_budget',
    message: 'the endpoint is receiving too many request bodies; retry later',
  },
  /** The source's share of the body budget (an eighth) cannot take the declared length: refused unread, Retry-After 1. */
  bodyBudgetSource: {
    status: 429,
    reason: 'body_budget_source',
    message: 'too many request bodies are being received from this source; retry later',
  },
  /** More requests pipelined on one connection than could be in flight: refused in order, the connection closed. */
  tooManyPipelined: {
    status: 429,
    reason: 'pipelined',
    message: 'too many requests pipelined on this connection (at most 32 waiting): read the answers before sending more',
  },
  /** An `Expect` header other than 100-continue. */
  expectationFailed: { status: 417, reason: 'expectation_failed', message: 'only "Expect: 100-continue" is understood' },
} as const satisfies Record<string, TransportRefusal>;

/** A body over the configured cap (size-limit's `max_body_bytes`): the limit is stated. */
export const bodyTooLarge = (maxBytes: number): TransportRefusal => ({
  status: 413,
  reason: 'payload_too_large',
  message: `request body too large (at most ${maxBytes} bytes)`,
});
