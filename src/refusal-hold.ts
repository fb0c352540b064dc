/**
 * A source that keeps being refused for its own limits past its allowance of refusals (rate-limit:
 * as many as its quota) is held: after such a 429 nothing more is read from the connection it was
 * refused on until the allowance holds a refusal again (at most `HOLD_MAX_MS`). What it sends
 * sooner waits unread in the kernel, so a client that asks again at once costs the ingress about
 * its quota in refusals, not one per round trip (32 connections retrying at once were refused
 * ~6,000 times a second, 200 of cheap reads ~12,000). A request read anyway from a held connection
 * (pipelined) waits until the hold has passed; a second one pipelined behind it closes the
 * connection. Only that connection: the address's other connections, open or new, are not held
 * (a NAT neighbour's new connection was held for a flooder's refusals: its submissions x30), and
 * a client that opens a new connection per retry pays a handshake for each, within its source's
 * connection cap. A trusted proxy's connection carries others' requests: never held; the refusal
 * itself is written once the hold has passed instead, so that a client behind the proxy asking
 * again at once waits as one connecting directly would, and the proxy's connection carries
 * nothing else meanwhile (an HTTP/1.1 proxy sends one request at a time on it).
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { peerSource, type PeerSource } from './source-connections.js';

/**
 * The longest hold, and what an allowance in debt takes to earn a refusal back at most: a client
 * that stops retrying at once is not held for it a second later.
 */
export const HOLD_MAX_MS = 1_000;

/** The hold for `waitMs` on a server that closes a connection left unread for `timeoutMs` (0: never). */
export function holdFor(waitMs: number, timeoutMs: number): number {
  const most = timeoutMs > 0 ? Math.min(HOLD_MAX_MS, Math.floor(timeoutMs / 2)) : HOLD_MAX_MS;
  return Math.max(0, Math.min(waitMs, most));
}

/** A connection held now: until when, what ends the hold, and its listeners. */
interface HeldSocket {
  until: number;
  timer: NodeJS.Timeout;
  readonly pauseAgain: () => void;
  readonly closed: () => void;
}

/** Sources and connections held, for the whole process (across reloads). */
/** What the request path asks of holds: answer a refusal past a source's allowance, holding what sent it. */
export interface RefusalHolds {
  refuse(res: ServerResponse, ms: number, write: () => void): void;
}

export class SourceHolds implements RefusalHolds {
  /** Set by a drain: nothing is held any more. */
  private closing = false;
  /** Refusals to a trusted proxy's clients, each written when its hold has passed. */
  private readonly delayed = new Map<ServerResponse, { readonly timer: NodeJS.Timeout; readonly write: () => void }>();
  /** Requests read while held, each served when its hold has passed: one per connection. */
  private readonly waiting = new Map<Socket, { readonly timer: NodeJS.Timeout; readonly serve: () => void }>();
  private readonly sockets = new Map<Socket, HeldSocket>();

  /**
   * `timeoutMs`: the smaller of the server's keep-alive and header timeouts, which bound a hold
   * (a connection held longer would be closed, or answered 408, with the client's request in it).
   * `sourceOf`: the running chain's name for a TCP peer.
   */
  constructor(
    private readonly timeoutMs: number,
    private readonly sourceOf: PeerSource,
  ) {}

  /**
   * A refusal whose connection is to be held `ms` once `write` has written it to `res` (unless
   * the connection closes with it); on a trusted proxy's connection, `write` is called once the
   * hold has passed instead. Either way, `write` is called once.
   */
  refuse(res: ServerResponse, ms: number, write: () => void): void {
    const hold = holdFor(ms, this.timeoutMs);
    if (hold <= 0 || this.closing) return write();
    const socket = res.req.socket;
    if (peerSource(socket.remoteAddress ?? '', this.sourceOf) === null) {
      const timer = setTimeout(() => {
        this.delayed.delete(res);
        write();
      }, hold).unref();
      this.delayed.set(res, { timer, write });
      res.once('close', () => {
        clearTimeout(timer);
        this.delayed.delete(res);
      });
      return;
    }
    // From when the refusal is written: the client is told to wait from then.
    res.once('finish', () => this.hold(socket, Date.now() + hold));
    write();
  }

  /**
   * How long a request just read from `socket` must wait: its connection is held (bytes Node
   * read anyway, a new connection read before its pause). 0 at once when nothing is held.
   */
  heldFor(socket: Socket): number {
    if (this.sockets.size === 0) return 0;
    const held = this.sockets.get(socket);
    return held === undefined ? 0 : Math.max(0, held.until - Date.now());
  }

  /**
   * Serves a request read while held once `ms` have passed, its connection held meanwhile. A
   * second one read from the same connection before then (pipelined while told to wait) closes
   * the connection instead.
   */
  defer(socket: Socket, ms: number, serve: () => void): void {
    if (this.waiting.has(socket)) return void socket.destroy();
    this.hold(socket, Date.now() + ms);
    const timer = setTimeout(() => {
      this.waiting.delete(socket);
      serve();
    }, ms).unref();
    this.waiting.set(socket, { timer, serve });
  }

  /**
   * Reads every held connection again (a drain: requests waiting in them are read and answered
   * rather than cut with the idle connections), and resolves once what they hold has been read.
   */
  async releaseAll(): Promise<void> {
    this.closing = true;
    for (const [res, { timer, write }] of [...this.delayed]) {
      clearTimeout(timer);
      this.delayed.delete(res);
      write();
    }
    for (const [socket, { timer, serve }] of [...this.waiting]) {
      clearTimeout(timer);
      this.waiting.delete(socket);
      serve();
    }
    if (this.sockets.size === 0) return;
    for (const socket of [...this.sockets.keys()]) this.release(socket);
    // Two turns of the loop: the first may end in the same poll phase that called this one; by
    // the end of the second, the sockets' pending bytes have been read and parsed.
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Connections held now (for tests). */
  get heldSockets(): number {
    return this.sockets.size;
  }

  private hold(socket: Socket, until: number): void {
    const left = until - Date.now();
    // A drain reads every connection: a refusal written as it began holds nothing.
    if (socket.destroyed || left <= 0 || this.closing) return;
    const held = this.sockets.get(socket);
    if (held !== undefined) {
      if (until <= held.until) return;
      held.until = until;
      clearTimeout(held.timer);
      held.timer = setTimeout(() => this.release(socket), left).unref();
      return;
    }
    // Node's HTTP server resumes a socket itself (after each message it parses, when a body is
    // read): while the hold lasts, it is paused again at once.
    const pauseAgain = () => void socket.pause();
    const closed = () => void this.end(socket);
    this.sockets.set(socket, { until, timer: setTimeout(() => this.release(socket), left).unref(), pauseAgain, closed });
    socket.on('resume', pauseAgain);
    socket.once('close', closed);
    socket.pause();
  }

  private release(socket: Socket): void {
    if (this.end(socket) && !socket.destroyed) socket.resume();
  }

  /** Forgets the hold on `socket`; false if there was none. */
  private end(socket: Socket): boolean {
    const held = this.sockets.get(socket);
    if (held === undefined) return false;
    this.sockets.delete(socket);
    clearTimeout(held.timer);
    socket.off('resume', held.pauseAgain);
    socket.off('close', held.closed);
    return true;
  }
}
