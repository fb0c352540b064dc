/**
 * Who sent a request, as the rate limiter counts it.
 *
 * - The TCP peer, unless it is one of `trusted_proxies`; then `X-Forwarded-For` is walked from
 *   the right past trusted hops, and the first untrusted hop is the client. A hop that does not
 *   parse stops the walk (the last trusted hop is used), so a client cannot smuggle a source in
 *   through garbage. From an untrusted peer the header is ignored entirely. A hop may carry a
 *   port, as some cloud balancers write it (`203.0.113.9:5678`, `[2001:db8::1]:443`).
 * - IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as the IPv4 address.
 * - IPv6 sources are grouped by prefix (`ipv6_source_prefix`, /48 by default; see sourceKey):
 *   counting single addresses would let one site rotate through 2^80 buckets.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type Cidr = [Address, number];

/** Parses a CIDR list once; throws with the offending entry. */
export function parseCidrs(list: readonly string[]): Cidr[] {
  return list.map((entry) => {
    const cidr = entry.includes('/') ? entry : `${entry}/${ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128}`;
    const [address, bits] = ipaddr.parseCIDR(cidr);
    return [normalise(address), address.kind() === 'ipv6' && normalise(address).kind() === 'ipv4' ? bits - 96 : bits];
  });
}

function normalise(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

function parse(text: string): Address | undefined {
  try {
    return normalise(ipaddr.parse(text.trim()));
  } catch {
    return undefined;
  }
}

/** `a.b.c.d:port` or `[v6]:port`; a bare IPv6 address has colons of its own and no port. */
const HOP_WITH_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/;

/** An X-Forwarded-For hop: an address, with or without a port. */
function parseHop(text: string): Address | undefined {
  const hop = text.trim();
  const withPort = HOP_WITH_PORT.exec(hop);
  if (withPort !== null) return parse(withPort[1] ?? withPort[2]!);
  return parse(hop.startsWith('[') && hop.endsWith(']') ? hop.slice(1, -1) : hop);
}

/**
 * The bucket key of an address: the IPv4 address, or its IPv6 prefix of `ipv6Bits` (48 by
 * default: a subscriber's site holds a whole /48, 65,536 /64s it could rotate through).
 */
export function sourceKey(address: Address, ipv6Bits: number): string {
  if (address.kind() === 'ipv4') return address.toString();
  const bytes = (address as ipaddr.IPv6).toByteArray();
  for (let bit = ipv6Bits; bit < 128; bit++) bytes[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6Bits}`;
}

/** Peers remembered with their bucket key: a keep-alive client sends many requests. */
const PEER_CACHE_SIZE = 10_000;

export function createSourceResolver(trustedProxies: readonly Cidr[], ipv6Bits = 48) {
  const trusted = (address: Address) =>
    trustedProxies.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
  // peer -> its key, or undefined for a trusted proxy (whose requests carry their own source).
  const peers = new Map<string, string | undefined>();
  const keyOfPeer = (peer: string): string | undefined => {
    if (peers.has(peer)) return peers.get(peer);
    const address = parse(peer);
    const key = address === undefined ? peer : trusted(address) ? undefined : sourceKey(address, ipv6Bits);
    if (peers.size >= PEER_CACHE_SIZE) peers.clear();
    peers.set(peer, key);
    return key;
  };
  /** The key of a TCP peer itself, or null for a trusted proxy (which speaks for others). */
  const ofPeer = (peer: string): string | null => keyOfPeer(peer) ?? null;
  return Object.assign(sourceOf, { ofPeer });
  function sourceOf(peer: string, forwardedFor: string | string[] | undefined): string {
    const key = keyOfPeer(peer);
    if (key !== undefined) return key;
    const peerAddress = parse(peer)!;
    if (forwardedFor === undefined) return sourceKey(peerAddress, ipv6Bits);
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    let client = peerAddress;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseHop(hops[i]!);
      if (hop === undefined) break;
      client = hop;
      if (!trusted(hop)) break;
    }
    return sourceKey(client, ipv6Bits);
  }
}
