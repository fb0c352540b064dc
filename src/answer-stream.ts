/**
 * Writes one upstream answer into a client's response as undici delivers it: the handler undici's
 * dispatcher calls for the request's start, the answer's headers, each chunk and the end.
 * undici's own `stream()` wraps the same calls in an AsyncResource, an abort-signal listener and
 * `stream.finished` (several listeners on the response per call); a proxied read needs none.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import { ENTRY_MAX_BYTES } from './cache/answer-cache.js';
import { errors, RpcFailure } from './errors.js';
import { isJsonContentType } from './jsonrpc.js';

/** `err` undefined: the answer is complete. Otherwise whatever undici reported, as it reported it. */
export type AnswerStreamDone = (err: Error | undefined, declaredBytes: number) => void;

const JSON_HEADER_LIST = ['content-type', 'application/json'];

export class AnswerStream implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
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
    if (this.outliveClient && this.controller !== undefined && !this.answered) return;
    this.controller?.abort(new undiciErrors.RequestAbortedError());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.sentAt = performance.now();
    if (this.res.destroyed) controller.abort(new undiciErrors.RequestAbortedError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.elAnswered();
    if (this.res.destroyed) return controller.abort(new undiciErrors.RequestAbortedError());
    // An EL answers JSON-RPC errors with 200 and JSON; anything else is an HTML error page or a
    // broken proxy, which must not reach the client as if it were an answer. The body itself is
    // never parsed here: that is what keeps streaming cheap.
    const type = headers['content-type'];
    if (statusCode !== 200 || typeof type !== 'string' || !isJsonContentType(type)) {
      return controller.abort(new RpcFailure(errors.upstreamInvalid()));
    }
    const length = headers['content-length'];
    if (length === '0') return controller.abort(new RpcFailure(errors.upstreamInvalid()));
    if (typeof length === 'string') this.declaredBytes = Number(length);
    if (this.keep !== undefined) this.kept = [];
    // Headers as a flat list: written as given, without setHeader's bookkeeping.
    this.head = typeof length === 'string' ? [...JSON_HEADER_LIST, 'content-length', length] : JSON_HEADER_LIST;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    // A closed response never drains: waiting for it would hold the upstream connection.
    if (this.res.destroyed) return controller.abort(new undiciErrors.RequestAbortedError());
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
      if (chunk.length === this.declaredBytes && chunk.length < this.res.writableHighWaterMark) return void this.res.end(chunk);
    }
    if (this.res.write(chunk) || this.waitingForDrain) return;
    // undici stops reading until the client has taken what is buffered. Whoever waits for the
    // whole answer (a read sharing it) must not wait on this client's pace.
    this.abandonKeep();
    controller.pause();
    this.waitingForDrain = true;
    if (this.stallMs !== Infinity) {
      this.stallTimer = setTimeout(() => {
        controller.abort(new undiciErrors.RequestAbortedError());
        this.res.destroy();
      }, this.stallMs);
    }
    this.res.once('drain', () => {
      clearTimeout(this.stallTimer);
      this.waitingForDrain = false;
      controller.resume();
    });
  }

  onResponseEnd(): void {
    // HTTP 200 and JSON, but not a byte of it (a chunked answer that ended at once).
    if (this.head !== undefined) return this.finish(new RpcFailure(errors.upstreamInvalid()));
    if (!this.res.writableEnded) this.res.end();
    if (this.kept !== undefined) this.keep?.(Buffer.concat(this.kept));
    this.finish(undefined);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    // No answer (a timeout, a reset, an abort): the EL had the request this long all the same.
    if (this.sentAt > 0) this.elAnswered();
    this.finish(err);
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
