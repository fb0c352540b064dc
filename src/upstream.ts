/**
 * One upstream (the EL, or the submission target): pooled keep-alive HTTP connections through
 * undici, used two ways.
 *
 * - `stream()` pipes the upstream's answer straight into the client's response: no buffering,
 *   no parsing, so a multi-megabyte eth_getLogs starts flowing at once and costs no memory. If
 *   the client goes away, the caller cancels and the upstream request is aborted.
 * - `call()` is for the few small answers the ingress must read itself (a block's base fee,
 *   a fee history to rewrite, a submission's acknowledgement).
 *
 * Both translate transport failures into catalogue errors here, at the edge: the caller sees an
 * `RpcFailure` or a bug, never an undici error.
 */
import type { ServerResponse } from 'node:http';
import { type Dispatcher, interceptors, Pool } from 'undici';
import { AnswerStream } from './answer-stream.js';
import { AnswerText } from './answer-text.js';
import { errors, RpcFailure } from './errors.js';
import type { Answer } from './jsonrpc.js';
import type { Reachability } from './reachability.js';

export interface UpstreamOptions {
  readonly url: string;
  /** Keep-alive connections kept to this upstream. */
  readonly connections: number;
  /** Time allowed for the upstream's response headers. */
  readonly headersTimeoutMs: number;
  /** Time allowed between two chunks of the upstream's response body. */
  readonly bodyTimeoutMs: number;
  /**
   * The upstream is another svc-ingress (a follower's relay_url): its HTTP 429 answers carry a
   * JSON-RPC -32005 to pass on, not a broken response.
   */
  readonly isIngress?: boolean;
  /**
   * `call()` sends a request again, once, when the connection it went out on was closed before
   * any answer (a keep-alive connection the upstream had just closed: "other side closed"). Only
   * for reads: a read sent twice answers the same; a submission must never be.
   */
  readonly retryClosedConnection?: boolean;
  /** Told whether requests find the upstream answering (one log line per change). */
  readonly reachability?: Reachability;
}

/** One more try, at once, only for a connection closed before any answer; never on an HTTP status. */
const RETRY_CLOSED_CONNECTION = {
  maxRetries: 1,
  minTimeout: 0,
  timeoutFactor: 1,
  methods: ['POST' as const],
  statusCodes: [],
  errorCodes: ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'],
};

/** Told of every failed call, for metrics. */
export type UpstreamErrorListener = (kind: 'unavailable' | 'invalid') => void;

/** Largest answer `call()` will read; the answers it is used for are a few KiB. */
const MAX_CALL_ANSWER_BYTES = 4 * 1024 * 1024;
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export class Upstream {
  private readonly pool: Pool;
  /** Where `call()` dispatches: the pool, or the pool behind undici's retry interceptor. */
  private readonly calls: Dispatcher;
  private readonly path: string;

  constructor(
    readonly options: UpstreamOptions,
    private readonly onError: UpstreamErrorListener = () => {},
  ) {
    const url = new URL(options.url);
    this.path = url.pathname + url.search;
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      pipelining: 1,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      connect: { timeout: Math.min(options.headersTimeoutMs, 5_000) },
    });
    this.calls = options.retryClosedConnection === true ? this.pool.compose(interceptors.retry(RETRY_CLOSED_CONNECTION)) : this.pool;
  }

  /**
   * Sends `body` and streams the answer into `res`, then calls `done` once: with no error and
   * the answer's length as the EL declared it (0 when chunked) once it is complete; with an
   * `RpcFailure` when nothing has been written to `res` yet; with the cause when the answer had
   * started, since a failure then can only cut the response short (the socket is destroyed, the
   * client sees a truncated body rather than a wrong one).
   *
   * Returns `cancel`, for when the client goes away before the answer is complete: it releases
   * the upstream request and its pooled connection (`done` then gets the abort). A client that
   * reads nothing of the answer for `stallMs` is cut the same way. `onElTime` is told the EL's
   * time to the answer's headers, from the request written on its connection.
   */
  stream(
    body: string,
    res: ServerResponse,
    done: (err: unknown, declaredBytes: number) => void,
    stallMs?: number,
    onElTime?: (ms: number) => void,
    outliveClient = false,
    /** Told the whole answer, or undefined as soon as it will not be kept (answer-stream.ts). */
    keep?: (answer: Buffer | undefined) => void,
  ): () => void {
    const answer = new AnswerStream(
      res,
      (err, declaredBytes) => {
        if (err === undefined) {
          this.options.reachability?.answered();
          return done(undefined, declaredBytes);
        }
        done(res.headersSent || res.destroyed ? err : this.failure(err), 0);
      },
      stallMs,
      onElTime,
      outliveClient,
      keep,
    );
    this.pool.dispatch({ path: this.path, method: 'POST', headers: JSON_HEADERS, body }, answer);
    return () => answer.cancel();
  }

  /** Calls `method` and returns the upstream's answer, result or JSON-RPC error, parsed. */
  async call(method: string, params: readonly unknown[], headers?: Readonly<Record<string, string>>): Promise<Answer> {
    return this.parsed(await this.callText(method, params, MAX_CALL_ANSWER_BYTES, headers));
  }

  /**
   * Calls `method` and returns the upstream's answer as the text it wrote, up to `maxAnswerBytes`
   * (past it, a failure): for a caller that reads a large answer in slices (log-feed.ts).
   */
  callText(
    method: string,
    params: readonly unknown[],
    maxAnswerBytes: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<string> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    return new Promise((resolve, reject) => {
      const answer = new AnswerText(maxAnswerBytes, this.options.isIngress === true ? 429 : 200, (err, text) => {
        if (err !== undefined) return reject(this.failure(err));
        this.options.reachability?.answered();
        resolve(text);
      });
      this.calls.dispatch(
        { path: this.path, method: 'POST', headers: headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers }, body },
        answer,
      );
    });
  }

  /** Parses an answer `callText` returned, as `call` does. */
  parsed(text: string): Answer {
    try {
      return parseAnswer(text);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** The only RpcFailures raised in here are "invalid answer"; everything else is a transport failure. */
  private failure(err: unknown): RpcFailure {
    if (err instanceof RpcFailure) {
      this.onError('invalid');
      this.options.reachability?.answered();
      return err;
    }
    this.onError('unavailable');
    this.options.reachability?.failed(causeOf(err));
    return new RpcFailure(errors.upstreamUnavailable(), { cause: err });
  }

  /** Finishes in-flight requests, then closes the connections. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

function parseAnswer(text: string): Answer {
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    throw new RpcFailure(errors.upstreamInvalid());
  }
  if (reply !== null && typeof reply === 'object' && !Array.isArray(reply)) {
    const r = reply as Record<string, unknown>;
    if ('result' in r) return { result: r.result };
    const e = r.error as Record<string, unknown> | null | undefined;
    if (e && typeof e === 'object' && typeof e.code === 'number' && typeof e.message === 'string') {
      return { error: e.data === undefined ? { code: e.code, message: e.message } : { code: e.code, message: e.message, data: e.data } };
    }
  }
  throw new RpcFailure(errors.upstreamInvalid());
}

/** A transport failure's code (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, ...), or its class: never its message, which may name the URL. */
function causeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
}
