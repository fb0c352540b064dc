/**
 * Behind a proxy that is not in `trusted_proxies`, every client counts as the proxy: one bucket
 * for all, and nothing said (issue 37: nginx in front with the default `trusted_proxies: []`).
 * A request carrying `X-Forwarded-For` or `Forwarded` from a peer that is not trusted is told
 * once per peer (at most `MAX_PEERS` remembered), and at most one line per `EVERY_MS` in all.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../../src/plugin.js';

const MAX_PEERS = 1_000;
const EVERY_MS = 10_000;

export function forwardedWarning(
  log: Logger,
  now: () => number = Date.now,
): (address: string, headers: IncomingHttpHeaders, trusted: (address: string) => boolean) => void {
  const told = new Set<string>();
  let last = -Infinity;
  return (address, headers, trusted) => {
    if ((headers['x-forwarded-for'] === undefined && headers.forwarded === undefined) || told.has(address) || trusted(address)) return;
    const at = now();
    if (at - last < EVERY_MS) return;
    last = at;
    if (told.size >= MAX_PEERS) told.clear();
    told.add(address);
    log.warn(
      'rate-limit: forwarding headers from a peer not in trusted_proxies are ignored: every client behind it counts as that peer (add the proxy to rate-limit.trusted_proxies)',
      { peer: address },
    );
  };
}
