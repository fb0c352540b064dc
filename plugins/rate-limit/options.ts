/** rate-limit's YAML options. */
import type { OptionsReader } from '../../src/plugin.js';
import { type ApiKey, readApiKeys } from './api-keys.js';
import type { BucketSpec } from './bucket.js';
import { parseCidrs, type Cidr } from './source.js';

export interface TrafficLimits {
  readonly perSource: BucketSpec;
  readonly host: BucketSpec | undefined;
  readonly methodCosts: ReadonlyMap<string, number>;
  /** Reads only: gas-heavy reads cost one token per this much gas they ask for (heavy.ts). */
  readonly gasPerToken: bigint | undefined;
  /** Reads only: gas-heavy reads are charged one token per this much EL time beyond what they paid (heavy.ts). */
  readonly elMsPerToken: number | undefined;
}

export interface RateLimitOptions {
  readonly trustedProxies: ReturnType<typeof parseCidrs>;
  readonly submissions: TrafficLimits | undefined;
  readonly reads: TrafficLimits | undefined;
  /** Requests one source may have open at once (answered or streaming), whatever its tokens. */
  readonly maxInFlightPerSource: number;
  /** Gas-heavy reads (src/call-gas.ts) one source may have open at once: what it holds of the EL's time. */
  readonly maxHeavyInFlightPerSource: number;
  /** IPv6 sources are grouped by this prefix length. */
  readonly ipv6SourcePrefix: number;
  /** Keyed tenants by their key's SHA-256 (api-keys.ts); empty: every request counts by its address. */
  readonly apiKeys: ReadonlyMap<string, ApiKey>;
}

export function readBucket(options: OptionsReader): BucketSpec {
  const ratePerSecond = options.integer('rate_per_second', 0);
  const burst = options.integer('burst', ratePerSecond);
  if (burst < ratePerSecond) options.fail('burst', 'must be at least rate_per_second');
  options.done();
  return { ratePerSecond, burst };
}

/** A call at the EL's default gas cap (50,000,000) costs 5 tokens, what eth_call cost before it was priced by gas. */
const GAS_PER_TOKEN = 10_000_000;
/** 300 tokens a second (the shipped read quota) buy 1.5 seconds of EL time a second. */
const EL_MS_PER_TOKEN = 5;

function readTraffic(parent: OptionsReader, key: string, gasPriced = false): TrafficLimits | undefined {
  if (!parent.has(key)) return void parent.child(key);
  const options = parent.child(key);
  if (!options.has('per_source')) options.fail('per_source', 'is required: the bucket each source gets');
  const perSource = readBucket(options.child('per_source'));
  const host = options.optional('host', () => readBucket(options.child('host')));
  const gasPerToken = gasPriced ? BigInt(options.integer('gas_per_token', GAS_PER_TOKEN, { min: 1 })) : undefined;
  const elMsPerToken = gasPriced ? options.integer('el_ms_per_token', EL_MS_PER_TOKEN) : undefined;
  const costs = options.child('method_costs');
  const methodCosts = new Map<string, number>();
  for (const method of costs.keys()) {
    const cost = costs.integer(method, 1);
    for (const [bucket, spec] of [
      ['per_source', perSource],
      ['host', host],
    ] as const) {
      if (spec !== undefined && cost > spec.burst)
        costs.fail(method, `costs more than ${bucket}.burst (${spec.burst}): it could never pass`);
    }
    methodCosts.set(method, cost);
  }
  costs.done();
  options.done();
  return { perSource, host, methodCosts, gasPerToken, elMsPerToken };
}

export function parseRateLimitOptions(options: OptionsReader): RateLimitOptions {
  const list = options.stringList('trusted_proxies', []);
  let trustedProxies: Cidr[];
  try {
    trustedProxies = parseCidrs(list);
  } catch {
    const bad = list.findIndex((entry) => {
      try {
        parseCidrs([entry]);
        return false;
      } catch {
        return true;
      }
    });
    options.fail(`trusted_proxies[${bad}]`, 'must be an IP address or CIDR range');
  }
  const submissions = readTraffic(options, 'submissions');
  const reads = readTraffic(options, 'reads', true);
  const maxInFlightPerSource = options.integer('max_in_flight_per_source', 32);
  const maxHeavyInFlightPerSource = options.integer('max_heavy_in_flight_per_source', Math.min(2, maxInFlightPerSource), {
    max: maxInFlightPerSource,
  });
  const ipv6SourcePrefix = options.integer('ipv6_source_prefix', 48, { min: 32, max: 64 });
  const apiKeys = readApiKeys(options, readBucket);
  options.done();
  return { trustedProxies, submissions, reads, maxInFlightPerSource, maxHeavyInFlightPerSource, ipv6SourcePrefix, apiKeys };
}
