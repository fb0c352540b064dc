/**
 * Open client connections, per source and in all, for the whole process. Past `limit` from one
 * source, a new connection is closed on accept, before a byte of it is read. Past `total` in all,
 * a new connection from a source holding fewer than the busiest source is let in by closing the
 * busiest source's connection idle longest (none of its requests in flight): a new source always
 * gets a connection while older ones idle, and only a source that would hold as many as the
 * busiest is turned away. The source is what the chain names for the TCP peer (rate-limit's
 * source, IPv6 grouped by its `ipv6_source_prefix`), else the address itself with IPv6 grouped by
 * /64; a peer the chain says speaks for others (a trusted proxy) is not capped, nor closed for
 * another.
 */
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The chain's name for a TCP peer: a source key, null for a trusted proxy, undefined: no opinion. */
export type PeerSource = (address: string) => string | null | undefined;

/** A connection's requests in flight, and since when it has had none. */
interface Use {
  inFlight: number;
  idleSince: number;
}

export class SourceConnections {
  private readonly open = new Map<string, Set<Socket>>();
  private readonly uses = new WeakMap<Socket, Use>();
  private count = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Connections open now, trusted proxies' included. */
  get total(): number {
    return this.count;
  }

  /**
   * Counts `socket` under its source and returns undefined, or says which bound refused it
   * (counting nothing): its source holds `limit` already, or `total` are open and no idle
   * connection of a busier source can make room. The count is given back when the socket closes.
   */
  admit(socket: Socket, limit: number, sourceOf: PeerSource, total = Number.POSITIVE_INFINITY): 'source' | 'all' | undefined {
    const source = peerSource(socket.remoteAddress ?? '', sourceOf);
    const mine = source === null ? undefined : this.open.get(source);
    if ((mine?.size ?? 0) >= limit) return 'source';
    if (this.count >= total && !this.evictFor(mine?.size ?? 0)) return 'all';
    this.count++;
    this.uses.set(socket, { inFlight: 0, idleSince: this.now() });
    if (source !== null) {
      const set = mine ?? new Set<Socket>();
      if (mine === undefined) this.open.set(source, set);
      set.add(socket);
    }
    socket.once('close', () => {
      this.count--;
      if (source === null) return;
      const set = this.open.get(source)!;
      set.delete(socket);
      if (set.size === 0) this.open.delete(source);
    });
    return undefined;
  }

  /** A request has begun on `socket`. */
  busy(socket: Socket): void {
    const use = this.uses.get(socket);
    if (use !== undefined) use.inFlight++;
  }

  /** A request on `socket` has ended. */
  idle(socket: Socket): void {
    const use = this.uses.get(socket);
    if (use === undefined || use.inFlight === 0) return;
    if (--use.inFlight === 0) use.idleSince = this.now();
  }

  /** Connections `source` holds now (for tests). */
  held(source: string): number {
    return this.open.get(source)?.size ?? 0;
  }

  /** Closes the busiest source's connection idle longest, if that source holds more than `held` + 1. */
  private evictFor(held: number): boolean {
    let busiest: Set<Socket> | undefined;
    for (const set of this.open.values()) if (busiest === undefined || set.size > busiest.size) busiest = set;
    if (busiest === undefined || busiest.size <= held + 1) return false;
    let idlest: Socket | undefined;
    let since = Number.POSITIVE_INFINITY;
    for (const socket of busiest) {
      const use = this.uses.get(socket)!;
      if (use.inFlight === 0 && use.idleSince < since && !socket.destroyed) {
        idlest = socket;
        since = use.idleSince;
      }
    }
    if (idlest === undefined) return false;
    // Counted until its 'close' (the next turn of the loop): the newcomer is one over meanwhile.
    idlest.destroy();
    return true;
  }
}

/**
 * The source a TCP peer counts against, wherever the ingress counts by peer (connections, body
 * budget, gas-heavy reads' turns): what the chain names, else the address (IPv6 by its /64);
 * null for a peer that speaks for others (a trusted proxy).
 */
export function peerSource(address: string, sourceOf: PeerSource): string | null {
  const named = sourceOf(address);
  return named === undefined ? defaultSource(address) : named;
}

/** IPv4 (IPv4-mapped IPv6 included) by address, IPv6 by its /64. */
export function defaultSource(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return address;
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const bytes = v6.toByteArray().fill(0, 8);
  return `${ipaddr.fromByteArray(bytes).toString()}/64`;
}
