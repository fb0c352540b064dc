/**
 * Writes one upstream answer into a client's response as undici delivers it: the handler undici's
 * dispatcher calls for the request's start, the answer's headers, each chunk and the end.
 * undici's own `stream()` wraps the same calls in an AsyncResource, an abort-signal listener and
 * `stream.finished` (several listeners on the response per call); a proxied read needs none.
 *
 * It implements undici's raw handler calls (`onConnect`, `onHeaders`, `onData`, `onComplete`,
 * `onError`), the ones its HTTP/1.1 client makes: a handler of the newer controller API is
 * wrapped per request in two more objects that parse every header of the answer into an object
 * and its trailers into another; this one reads the two headers it needs from the raw list
 * (docs/decisions/0001-forwarding-handler.md).
 */
import type { ServerResponse } from 'node:http';
import { errors as undiciErrors, util, type Dispatcher } from 'undici';
import { ENTRY_MAX_BYTES } from './cache/answer-cache.js';
import { errors, RpcFailure } from './errors.js';
import { isJsonContentType } from './jsonrpc.js';

/** `err` undefined: the answer is complete. Otherwise whatever undici reported, as it reported it. */
export type AnswerStreamDone = (err: Error | undefined, declaredBytes: number) => void;

const CONTENT_TYPE = 'content-type';
const CONTENT_LENGTH = 'content-length';
const JSON_HEADER_LIST = [CONTENT_TYPE, 'application/json'];

/** undici's raw header list: names and values alternating, as the EL sent them. */
type RawHeaders = readonly (Buffer | string)[];

/** A header the EL sent twice: no one value to go by (no JSON type; no declared length). */
const repeated = Symbol('repeated');

export class AnswerStream implements Dispatcher.DispatchHandler {
  private abort: ((err: Error) => void) | undefined;
  /** Reads the EL's answer on once undici has stopped for a drain (the client's). */
  private resume: (() => void) | undefined;
  private waitingForDrain = false;
  /** Cuts an answer the client stopped reading (see constructor). */
  private stallTimer: NodeJS.Timeout | undefined;
  private declaredBytes = 0;
  /** The response's head, written with the first byte of the body: an empty body is no answer. */
  private head: string[] | undefined;
  /** When the request was written on its connection (for `onElTime`). */
  private sentAt = 0;
  /** Whether the EL's answer has begun (its headers): `onElTime` is told once. */
  private answered = false;
  /** The answer's chunks while it may be kept (see `keep`). */
  private kept: Buffer[] | undefined;
  private keptBytes = 0;

  constructor(
    private readonly res: ServerResponse,
    private done: AnswerStreamDone | undefined,
    /**
     * A client that takes nothing of a buffered answer for this long is cut, and the upstream
     * request aborted: pausing alone would hold the pooled connection for the whole body timeout,
     * and a few hundred unread answers would hold every connection to the EL.
     */
    private readonly stallMs: number = Infinity,
    /** Told once the EL's time to the answer's headers, from the request written on its connection. */
    private readonly onElTime?: (ms: number) => void,
    /**
     * Once the EL has the request, wait for its answer even if the client goes: aborting frees
     * the connection but not the EL, which computes a call to its end regardless. The caller then
     * holds what the call costs (its slots) until `done`, and the EL time is known.
     */
    private readonly outliveClient = false,
    /**
     * Told the whole answer once it has ended well (src/cache/), or undefined as soon as it will
     * not be: past ENTRY_MAX_BYTES, or when the client reads slower than the EL answers.
     */
    private readonly keep?: (answer: Buffer | undefined) => void,
  ) {}

  /**
   * The client went away: release the upstream request (and its pooled connection). Before the
   * request has started there is nothing to release yet; it will find the response closed.
   */
  cancel(): void {
    if (this.outliveClient && this.abort !== undefined && !this.answered) return;
    this.abort?.(new undiciErrors.RequestAbortedError());
  }

  /** The request is going out on a connection: `abort` ends it (and `onError` is told). */
  onConnect(abort: (err: Error) => void): void {
    this.abort = abort;
    this.sentAt = performance.now();
    if (this.res.destroyed) abort(new undiciErrors.RequestAbortedError());
  }

  /** The answer's status and headers; returning false would stop undici reading (never wanted here). */
  onHeaders(statusCode: number, headers: RawHeaders, resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.resume = resume;
    this.elAnswered();
    if (this.res.destroyed) return this.aborted(new undiciErrors.RequestAbortedError());
    let type: string | typeof repeated | undefined;
    let length: string | typeof repeated | undefined;
    for (let i = 0; i < headers.length; i += 2) {
      const raw = headers[i]!;
      // Only names of these two lengths are looked up: an EL sends a few more (date, vary, ...).
      if (raw.length !== CONTENT_TYPE.length && raw.length !== CONTENT_LENGTH.length) continue;
      const name = util.headerNameToString(raw);
      if (name === CONTENT_TYPE) type = type === undefined ? headers[i + 1]!.toString('latin1') : repeated;
      else if (name === CONTENT_LENGTH) length = length === undefined ? headers[i + 1]!.toString('latin1') : repeated;
    }
    // An EL answers JSON-RPC errors with 200 and JSON; anything else is an HTML error page or a
    // broken proxy, which must not reach the client as if it were an answer. The body itself is
    // never parsed here: that is what keeps streaming cheap.
    if (statusCode !== 200 || typeof type !== 'string' || !isJsonContentType(type)) {
      return this.aborted(new RpcFailure(errors.upstreamInvalid()));
    }
    if (length === '0') return this.aborted(new RpcFailure(errors.upstreamInvalid()));
    if (typeof length === 'string') this.declaredBytes = Number(length);
    if (this.keep !== undefined) this.kept = [];
    // Headers as a flat list: written as given, without setHeader's bookkeeping.
    this.head = typeof length === 'string' ? [CONTENT_TYPE, 'application/json', CONTENT_LENGTH, length] : JSON_HEADER_LIST;
    return true;
  }

  /** One chunk of the answer; false stops undici reading until the client's response drains. */
  onData(chunk: Buffer): boolean {
    // A closed response never drains: waiting for it would hold the upstream connection.
    if (this.res.destroyed) return this.aborted(new undiciErrors.RequestAbortedError());
    if (this.kept !== undefined) {
      this.keptBytes += chunk.length;
      if (this.keptBytes <= ENTRY_MAX_BYTES) this.kept.push(chunk);
      else this.abandonKeep();
    }
    if (this.head !== undefined) {
      this.res.writeHead(200, this.head);
      this.head = undefined;
      // The whole answer in one small chunk (most reads): written and ended at once, without the
      // cork Node sets up for a first write and undoes at the end. A larger one is written as
      // any other, so that a client not reading it is cut (stallMs) rather than held.
      if (chunk.length === this.declaredBytes && chunk.length < this.res.writableHighWaterMark) {
        this.res.end(chunk);
        return true;
      }
    }
    const written = this.res.write(chunk);
    if (this.waitingForDrain) return false;
    if (written) return true;
    // undici stops reading until the client has taken what is buffered. Whoever waits for the
    // whole answer (a read sharing it) must not wait on this client's pace.
    this.abandonKeep();
    this.waitingForDrain = true;
    if (this.stallMs !== Infinity) {
      this.stallTimer = setTimeout(() => {
        this.abort?.(new undiciErrors.RequestAbortedError());
        this.res.destroy();
      }, this.stallMs);
    }
    this.res.once('drain', () => {
      clearTimeout(this.stallTimer);
      this.waitingForDrain = false;
      this.resume?.();
    });
    return false;
  }

  /** The answer is complete (trailers, never sent by an EL, are ignored). */
  onComplete(): void {
    // HTTP 200 and JSON, but not a byte of it (a chunked answer that ended at once).
    if (this.head !== undefined) return this.finish(new RpcFailure(errors.upstreamInvalid()));
    if (!this.res.writableEnded) this.res.end();
    if (this.kept !== undefined) this.keep?.(Buffer.concat(this.kept));
    this.finish(undefined);
  }

  onError(err: Error): void {
    // No answer (a timeout, a reset, an abort): the EL had the request this long all the same.
    if (this.sentAt > 0) this.elAnswered();
    this.finish(err);
  }

  /** Ends the request with `err` (`onError` reports it); what undici is told to do next is moot. */
  private aborted(err: Error): true {
    this.abort?.(err);
    return true;
  }

  /** The answer will not be kept: `keep` is told at once (undefined) rather than at the end. */
  private abandonKeep(): void {
    if (this.kept === undefined) return;
    this.kept = undefined;
    this.keep?.(undefined);
  }

  private elAnswered(): void {
    if (this.answered) return;
    this.answered = true;
    this.onElTime?.(performance.now() - this.sentAt);
  }

  private finish(err: Error | undefined): void {
    clearTimeout(this.stallTimer);
    const done = this.done;
    this.done = undefined;
    done?.(err, err === undefined ? this.declaredBytes : 0);
  }
}
