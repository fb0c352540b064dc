/**
 * rate-limit: token buckets per source, then host-wide (spec 4.4, 7, 8). A source over its own
 * quota is refused before the host bucket is touched, so it cannot drain the host's capacity
 * for everyone else. Over quota: -32005 with HTTP 429, a Retry-After header and
 * `data.retry_after_ms`.
 *
 * Submissions (`eth_sendRawTransaction`) and reads have separate buckets; a read costs
 * `method_costs[method]` tokens (default 1), so one client cannot monopolise the EL with
 * `eth_getLogs` and `eth_call`. A class whose buckets are not configured is not limited.
 *
 * Reads: the TCP peer and `X-Forwarded-For` (from `trusted_proxies` only; see source.ts).
 * Order: after allowlist (quota is spent only on allowed calls), before gate.
 */
import { errors } from '../../src/errors.js';
import type { PluginModule, RequestContext, Verdict } from '../../src/plugin.js';
import { Bucket, hostedBucket } from './bucket.js';
import { parseRateLimitOptions, type RateLimitOptions, type TrafficLimits } from './options.js';
import { createSourceResolver } from './source.js';

interface Buckets {
  readonly name: string;
  readonly perSource: Bucket;
  readonly host: Bucket | undefined;
  readonly costs: ReadonlyMap<string, number>;
}

export const rateLimit: PluginModule<RateLimitOptions> = {
  name: 'rate-limit',
  parseOptions: parseRateLimitOptions,
  shared: { 'rate-limit': hostedBucket },
  create(options, { fleet, metrics }) {
    const sourceOf = createSourceResolver(options.trustedProxies);
    const buckets = (name: string, limits: TrafficLimits | undefined): Buckets | undefined =>
      limits && {
        name,
        perSource: new Bucket(`${name}:source`, limits.perSource, fleet),
        host: limits.host && new Bucket(`${name}:host`, limits.host, fleet),
        costs: limits.methodCosts,
      };
    const submissions = buckets('submissions', options.submissions);
    const reads = buckets('reads', options.reads);

    // The source's own bucket first, then the host's; continuations rather than awaits, so a
    // read stays synchronous when the buckets are in this process.
    const limit = (limits: Buckets, source: string, cost: number): Verdict | Promise<Verdict> =>
      limits.perSource.consume(source, cost, (own): Verdict | Promise<Verdict> => {
        if (!own.ok) {
          metrics.rateLimited(limits.name, 'source');
          return { error: errors.rateLimited('source', own.retryAfterMs) };
        }
        if (limits.host === undefined) return undefined;
        return limits.host.consume('host', cost, (host): Verdict => {
          if (host.ok) return undefined;
          metrics.rateLimited(limits.name, 'host');
          return { error: errors.rateLimited('host', host.retryAfterMs) };
        });
      });

    return {
      name: 'rate-limit',
      handle({ request, peer }: RequestContext): Verdict | Promise<Verdict> {
        const limits = request.method === 'eth_sendRawTransaction' ? submissions : reads;
        if (limits === undefined) return undefined;
        const source = sourceOf(peer.address, peer.headers['x-forwarded-for']);
        return limit(limits, source, limits.costs.get(request.method) ?? 1);
      },
    };
  },
};
