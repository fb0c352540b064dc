/**
 * Where one WebSocket message's answer is written: the part of a ServerResponse that the request
 * path writes to (server/exchange.ts's answers, upstream.ts's AnswerStream), collected in memory and handed
 * to the connection whole once it ends. An EL answer past `capBytes` is cut (the EL request aborted,
 * as for a client gone) and answered with an error instead: a WebSocket message is not streamed.
 */
import { EventEmitter } from 'node:events';

export class MessageSink extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  shouldKeepAlive = true;
  /** Larger answers are never buffered: `write` asks for a drain past it, as a socket would. */
  readonly writableHighWaterMark = 64 * 1024;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    /** Called once with the whole answer, or with undefined when it was cut (too large). */
    private readonly deliver: (answer: Buffer | undefined) => void,
    private readonly capBytes: number,
  ) {
    super();
  }

  setHeader(): this {
    return this;
  }

  writeHead(status: number): this {
    this.statusCode = status;
    this.headersSent = true;
    return this;
  }

  write(chunk: Buffer | string): boolean {
    if (this.destroyed) return false;
    this.headersSent = true;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.size += bytes.length;
    if (this.size > this.capBytes) {
      this.destroy();
      return false;
    }
    this.chunks.push(bytes);
    return true;
  }

  end(chunk?: Buffer | string): this {
    if (this.writableEnded || this.destroyed) return this;
    if (chunk !== undefined && !this.write(chunk)) return this;
    this.writableEnded = true;
    this.writableFinished = true;
    this.deliver(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size));
    this.emit('finish');
    this.emit('close');
    return this;
  }

  /** Cut: the answer is not delivered (too large, or the connection went). */
  destroy(): this {
    if (this.destroyed || this.writableFinished) return this;
    this.destroyed = true;
    if (this.size > this.capBytes) this.deliver(undefined);
    this.emit('close');
    return this;
  }
}
