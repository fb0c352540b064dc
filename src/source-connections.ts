/**
 * Open client connections per source, for the whole process: past `limit` from one source, a
 * new connection is closed on accept, before a byte of it is read. The source is what the chain
 * names for the TCP peer (rate-limit's source, IPv6 grouped by its `ipv6_source_prefix`), else
 * the address itself with IPv6 grouped by /64; a peer the chain says speaks for others (a
 * trusted proxy) is not capped.
 */
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The chain's name for a TCP peer: a source key, null for a trusted proxy, undefined: no opinion. */
export type PeerSource = (address: string) => string | null | undefined;

export class SourceConnections {
  private readonly open = new Map<string, number>();

  /**
   * Counts `socket` under its source and returns true, or returns false (counting nothing) when
   * that source already holds `limit`. The count is given back when the socket closes.
   */
  admit(socket: Socket, limit: number, sourceOf: PeerSource): boolean {
    const source = peerSource(socket.remoteAddress ?? '', sourceOf);
    if (source === null) return true;
    const held = this.open.get(source) ?? 0;
    if (held >= limit) return false;
    this.open.set(source, held + 1);
    socket.once('close', () => {
      const left = this.open.get(source)! - 1;
      if (left === 0) this.open.delete(source);
      else this.open.set(source, left);
    });
    return true;
  }

  /** Connections `source` holds now (for tests). */
  held(source: string): number {
    return this.open.get(source) ?? 0;
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
