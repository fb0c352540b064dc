/**
 * A source refused for its own limits owes the refusal too (rate-limit takes a token for it, into
 * debt). While its bucket holds less than a token nothing of it could pass, so nothing more is
 * read from the connection it was refused on, nor from a connection it opens meanwhile, until the
 * bucket holds one again (at most `HOLD_MAX_MS`): what it sends sooner waits unread in the kernel.
 * A client that asks again at once then costs the ingress about one refusal per connection and
 * hold, not one per round trip (32 connections retrying at once were refused ~6,000 times a
 * second, 200 of cheap reads ~12,000). A client that waits as told, or whose bucket still holds a
 * token, sees nothing of it. A trusted proxy's connection carries others' requests: never held.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { peerSource, type PeerSource } from './source-connections.js';

/**
 * The longest hold: a debt can take a minute to earn back, and a connection left unread for longer
 * than its keep-alive timeout is closed by the server with the client's next request in it.
 */
export const HOLD_MAX_MS = 1_000;

/** The hold for `waitMs` on a server whose idle keep-alive connections close after `keepAliveMs` (0: never). */
export function holdFor(waitMs: number, keepAliveMs: number): number {
  const most = keepAliveMs > 0 ? Math.min(HOLD_MAX_MS, Math.floor(keepAliveMs / 2)) : HOLD_MAX_MS;
  return Math.max(0, Math.min(waitMs, most));
}

/** Sources told to wait, and until when (process-wide, across reloads). */
export class SourceHolds {
  private readonly until = new Map<string, number>();
  /** The map's size that sweeps it for holds that have ended: twice what the last sweep left. */
  private sweepAt = 1_024;

  /**
   * Once `res` (a refusal) is written, reads nothing more from its connection for `ms`, and holds
   * new connections of its source until then.
   */
  holdAfter(res: ServerResponse, ms: number, sourceOf: PeerSource): void {
    if (ms <= 0) return;
    const socket = res.req.socket;
    const source = peerSource(socket.remoteAddress ?? '', sourceOf);
    if (source === null) return;
    const until = Date.now() + ms;
    if (until > (this.until.get(source) ?? 0)) this.until.set(source, until);
    if (this.until.size >= this.sweepAt) this.sweep();
    res.once('finish', () => pauseFor(socket, ms));
  }

  /** A new connection: not read from while its source is held. */
  admit(socket: Socket, sourceOf: PeerSource): void {
    if (this.until.size === 0) return;
    const source = peerSource(socket.remoteAddress ?? '', sourceOf);
    if (source === null) return;
    const until = this.until.get(source) ?? 0;
    if (until <= Date.now()) return;
    // Not at once: the new socket's stream asks for its first read on the next tick, which would
    // start reading again. A request that arrives before this runs is read, and held after.
    setImmediate(() => pauseFor(socket, until - Date.now()));
  }

  /** Sources held now or recently (for tests). */
  get size(): number {
    return this.until.size;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [source, until] of this.until) if (until <= now) this.until.delete(source);
    this.sweepAt = Math.max(1_024, 2 * this.until.size);
  }
}

/** Stops reading `socket` for `ms` (a socket that closes meanwhile just stays closed). */
function pauseFor(socket: Socket, ms: number): void {
  if (socket.destroyed || ms <= 0) return;
  socket.pause();
  const resume = () => {
    socket.off('close', stop);
    socket.resume();
  };
  const timer = setTimeout(resume, ms).unref();
  const stop = () => clearTimeout(timer);
  socket.once('close', stop);
}
