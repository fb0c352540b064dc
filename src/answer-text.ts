/**
 * Reads one small upstream answer whole, as undici delivers it: the dispatch handler behind
 * `Upstream.call()`. undici's `request()` hands the body over as a Readable, read here with an
 * async iterator; every submission's forward pays for that, and it needs none of it. Like
 * `AnswerStream`, it implements undici's raw handler calls (docs/decisions/0001): undici's retry
 * interceptor, in front of the reads that may be sent twice, adapts them itself.
 */
import type { Dispatcher } from 'undici';
import { errors, RpcFailure } from './errors.js';

/** Not a 200, or larger than the caller's limit: not a JSON-RPC answer. */
const invalid = () => new RpcFailure(errors.upstreamInvalid());

export class AnswerText implements Dispatcher.DispatchHandler {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private abort: ((err: Error) => void) | undefined;

  constructor(
    private readonly limitBytes: number,
    /** The highest final status read as an answer: 200, or 429 from another ingress (its -32005). */
    private readonly highestStatus: 200 | 429,
    private settle: ((err: Error | undefined, text: string) => void) | undefined,
  ) {}

  /** The request is going out on a connection: `abort` ends it (and `onError` is told). */
  onConnect(abort: (err: Error) => void): void {
    this.abort = abort;
  }

  onHeaders(statusCode: number): boolean {
    // 1xx are interim; a final status other than 200 (or the ingress's 429) is not an answer.
    if (statusCode > 200 && statusCode !== this.highestStatus) this.abort?.(invalid());
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.limitBytes) {
      this.abort?.(invalid());
      return true;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.once(undefined, (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size)).toString('utf8'));
  }

  onError(err: Error): void {
    this.once(err, '');
  }

  private once(err: Error | undefined, text: string): void {
    const settle = this.settle;
    this.settle = undefined;
    settle?.(err, text);
  }
}
