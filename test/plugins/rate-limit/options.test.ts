import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parseRateLimitOptions, type RateLimitOptions } from '../../../plugins/rate-limit/options.js';
import { ConfigError, OptionsReader } from '../../../src/config/reader.js';

/** rate-limit's place in the shipped chain: load.ts names its options `plugins[4].rate-limit`. */
const PATH = 'plugins[4].rate-limit';
/** As load.ts builds it for one entry `- rate-limit: {...}` (or a bare `- rate-limit`: undefined). */
const parse = (raw?: Record<string, unknown> | null): RateLimitOptions => parseRateLimitOptions(OptionsReader.of(PATH, raw));

function complaint(raw: Record<string, unknown>): string {
  try {
    parse(raw);
  } catch (err) {
    expect(err, 'a ConfigError').to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  return 'accepted';
}

/** The trusted proxies as text, `address/bits`. */
const cidrs = (options: RateLimitOptions) => options.trustedProxies.map(([address, bits]) => `${address.toString()}/${bits}`);
/** Everything but the parsed CIDR objects, which `cidrs` shows. */
const limits = ({ trustedProxies: _, apiKeys: __, ...rest }: RateLimitOptions) => rest;

/** The rate-limit entry of config/ingress.yaml, as YAML reads it. */
function shippedRateLimitOptions(): Record<string, unknown> {
  const doc = parseYaml(readFileSync('config/ingress.yaml', 'utf8')) as { plugins: unknown[] };
  const entry = doc.plugins.find(
    (p): p is { 'rate-limit': Record<string, unknown> } => typeof p === 'object' && p !== null && 'rate-limit' in p,
  );
  expect(entry, 'config/ingress.yaml lists rate-limit with options').to.not.equal(undefined);
  return entry!['rate-limit'];
}

describe('rate-limit: options', () => {
  describe('defaults', () => {
    it('a bare `- rate-limit` holds 32 in flight per source (2 gas-heavy), groups IPv6 by /48, trusts no proxy and has no token buckets', () => {
      for (const raw of [undefined, null]) {
        const options = parse(raw);
        expect(cidrs(options)).to.deep.equal([]);
        expect(limits(options)).to.deep.equal({
          submissions: undefined,
          reads: undefined,
          maxInFlightPerSource: 32,
          maxHeavyInFlightPerSource: 2,
          ipv6SourcePrefix: 48,
        });
      }
    });

    it('the shipped entry states the documented defaults (32, 2, 48, no proxies, 10,000,000 gas a token) and reads its buckets as written', () => {
      const shipped = shippedRateLimitOptions();
      const options = parse(shipped);
      expect(cidrs(options)).to.deep.equal([]);
      expect([options.maxInFlightPerSource, options.maxHeavyInFlightPerSource, options.ipv6SourcePrefix]).to.deep.equal([
        parse().maxInFlightPerSource,
        parse().maxHeavyInFlightPerSource,
        parse().ipv6SourcePrefix,
      ]);
      expect(options.submissions).to.deep.equal({
        perSource: { ratePerSecond: 10, burst: 50 },
        host: { ratePerSecond: 3000, burst: 6000 },
        methodCosts: new Map(),
        gasPerToken: undefined,
        elMsPerToken: undefined,
      });
      expect(options.reads?.perSource).to.deep.equal({ ratePerSecond: 300, burst: 600 });
      expect(options.reads?.gasPerToken).to.equal(parse({ reads: { per_source: { rate_per_second: 1 } } }).reads?.gasPerToken);
      expect(options.reads?.gasPerToken).to.equal(10_000_000n);
      expect(options.reads?.elMsPerToken).to.equal(parse({ reads: { per_source: { rate_per_second: 1 } } }).reads?.elMsPerToken);
      expect(options.reads?.elMsPerToken).to.equal(5);
      expect(options.reads?.host).to.equal(undefined);
      expect(Object.fromEntries(options.reads!.methodCosts)).to.deep.equal((shipped.reads as { method_costs: unknown }).method_costs);
    });
  });

  describe('trusted_proxies', () => {
    it('takes addresses and CIDR ranges, an address counting as a whole /32 or /128', () => {
      expect(cidrs(parse({ trusted_proxies: ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '::1'] }))).to.deep.equal([
        '10.0.0.0/8',
        '192.0.2.7/32',
        '2001:db8::/32',
        '::1/128',
      ]);
    });

    for (const [label, list, index] of [
      ['a host name', ['10.0.0.0/8', 'proxy.internal'], 1],
      ['an IPv4 prefix past 32 bits', ['10.0.0.0/33'], 0],
      ['an IPv6 prefix past 128 bits', ['::1', '10.0.0.1', '2001:db8::/129'], 2],
    ] as const) {
      it(`refuses ${label}, naming the first bad entry`, () => {
        expect(complaint({ trusted_proxies: list })).to.equal(`${PATH}.trusted_proxies[${index}]: must be an IP address or CIDR range`);
      });
    }

    it('refuses a single string where the list belongs', () => {
      expect(complaint({ trusted_proxies: '10.0.0.0/8' })).to.equal(`${PATH}.trusted_proxies: must be a list of strings`);
    });
  });

  describe('submissions and reads', () => {
    it('reads an absent or null section as no bucket for that traffic', () => {
      expect(limits(parse({ submissions: null, reads: { per_source: { rate_per_second: 1 } } }))).to.deep.include({
        submissions: undefined,
      });
      expect(limits(parse({ submissions: { per_source: { rate_per_second: 1 } } }))).to.deep.include({ reads: undefined });
    });

    it('takes burst equal to rate_per_second when burst is left out', () => {
      expect(parse({ submissions: { per_source: { rate_per_second: 7 } } }).submissions).to.deep.equal({
        perSource: { ratePerSecond: 7, burst: 7 },
        host: undefined,
        methodCosts: new Map(),
        gasPerToken: undefined,
        elMsPerToken: undefined,
      });
    });

    it('prices gas-heavy reads by gas_per_token and el_ms_per_token, under reads only', () => {
      expect(parse({ reads: { per_source: { rate_per_second: 1 }, gas_per_token: 1_000_000 } }).reads?.gasPerToken).to.equal(1_000_000n);
      expect(complaint({ submissions: { per_source: { rate_per_second: 1 }, gas_per_token: 1_000_000 } })).to.equal(
        `${PATH}.submissions.gas_per_token: unknown key`,
      );
      expect(complaint({ reads: { per_source: { rate_per_second: 1 }, gas_per_token: 0 } })).to.equal(
        `${PATH}.reads.gas_per_token: must be a positive integer`,
      );
      expect(parse({ reads: { per_source: { rate_per_second: 1 }, el_ms_per_token: 20 } }).reads?.elMsPerToken).to.equal(20);
      expect(complaint({ submissions: { per_source: { rate_per_second: 1 }, el_ms_per_token: 20 } })).to.equal(
        `${PATH}.submissions.el_ms_per_token: unknown key`,
      );
      expect(complaint({ reads: { per_source: { rate_per_second: 1 }, el_ms_per_token: 0 } })).to.equal(
        `${PATH}.reads.el_ms_per_token: must be a positive integer`,
      );
    });

    it('takes a method cost equal to the smaller burst, and reads a null cost as 1', () => {
      const options = parse({
        reads: {
          per_source: { rate_per_second: 5, burst: 20 },
          host: { rate_per_second: 8, burst: 8 },
          method_costs: { eth_getLogs: 8, eth_call: null },
        },
      });
      expect([...options.reads!.methodCosts]).to.deep.equal([
        ['eth_getLogs', 8],
        ['eth_call', 1],
      ]);
    });

    for (const [label, raw, message] of [
      [
        'a section without per_source',
        { submissions: { host: { rate_per_second: 10 } } },
        `${PATH}.submissions.per_source: is required: the bucket each source gets`,
      ],
      ['an empty section', { reads: {} }, `${PATH}.reads.per_source: is required: the bucket each source gets`],
      ['a section that is not a mapping', { submissions: 10 }, `${PATH}.submissions: must be a mapping`],
      [
        'a bucket without rate_per_second',
        { submissions: { per_source: { burst: 5 } } },
        `${PATH}.submissions.per_source.rate_per_second: must be a positive integer`,
      ],
      [
        'a zero rate',
        { reads: { per_source: { rate_per_second: 0, burst: 5 } } },
        `${PATH}.reads.per_source.rate_per_second: must be a positive integer`,
      ],
      [
        'a host burst below its rate',
        { submissions: { per_source: { rate_per_second: 1 }, host: { rate_per_second: 10, burst: 9 } } },
        `${PATH}.submissions.host.burst: must be at least rate_per_second`,
      ],
      [
        'a misspelt bucket key',
        { submissions: { per_source: { rate_per_second: 1, brust: 5 } } },
        `${PATH}.submissions.per_source.brust: unknown key`,
      ],
      [
        'a misspelt section key',
        { submissions: { per_source: { rate_per_second: 1 }, hots: { rate_per_second: 1 } } },
        `${PATH}.submissions.hots: unknown key`,
      ],
      [
        'a zero method cost',
        { reads: { per_source: { rate_per_second: 10 }, method_costs: { eth_call: 0 } } },
        `${PATH}.reads.method_costs.eth_call: must be a positive integer`,
      ],
      [
        'a method cost as text',
        { reads: { per_source: { rate_per_second: 10 }, method_costs: { eth_call: 'high' } } },
        `${PATH}.reads.method_costs.eth_call: must be a positive integer`,
      ],
      [
        'a method cost above the submissions bucket',
        { submissions: { per_source: { rate_per_second: 2, burst: 3 }, method_costs: { eth_sendRawTransaction: 4 } } },
        `${PATH}.submissions.method_costs.eth_sendRawTransaction: costs more than per_source.burst (3): it could never pass`,
      ],
    ] as const) {
      it(`refuses ${label}`, () => {
        expect(complaint(raw)).to.equal(message);
      });
    }
  });

  describe('bounds', () => {
    for (const [label, raw, value] of [
      ['ipv6_source_prefix: 32, the least', { ipv6_source_prefix: 32 }, { ipv6SourcePrefix: 32 }],
      ['ipv6_source_prefix: 64, the most', { ipv6_source_prefix: 64 }, { ipv6SourcePrefix: 64 }],
      [
        'max_in_flight_per_source: 1, and with it 1 gas-heavy',
        { max_in_flight_per_source: 1 },
        { maxInFlightPerSource: 1, maxHeavyInFlightPerSource: 1 },
      ],
      [
        'max_heavy_in_flight_per_source up to max_in_flight_per_source',
        { max_in_flight_per_source: 4, max_heavy_in_flight_per_source: 4 },
        { maxHeavyInFlightPerSource: 4 },
      ],
    ] as const) {
      it(`takes ${label}`, () => {
        expect(limits(parse(raw))).to.deep.include(value);
      });
    }

    for (const [label, raw, message] of [
      ['ipv6_source_prefix below 32', { ipv6_source_prefix: 31 }, `${PATH}.ipv6_source_prefix: must be an integer >= 32`],
      ['ipv6_source_prefix past 64', { ipv6_source_prefix: 65 }, `${PATH}.ipv6_source_prefix: must be at most 64`],
      ['ipv6_source_prefix: 128 (single addresses)', { ipv6_source_prefix: 128 }, `${PATH}.ipv6_source_prefix: must be at most 64`],
      ['a zero max_in_flight_per_source', { max_in_flight_per_source: 0 }, `${PATH}.max_in_flight_per_source: must be a positive integer`],
      [
        'a zero max_heavy_in_flight_per_source',
        { max_heavy_in_flight_per_source: 0 },
        `${PATH}.max_heavy_in_flight_per_source: must be a positive integer`,
      ],
      [
        'more gas-heavy reads in flight than requests',
        { max_in_flight_per_source: 4, max_heavy_in_flight_per_source: 5 },
        `${PATH}.max_heavy_in_flight_per_source: must be at most 4`,
      ],
      [
        'a fractional max_in_flight_per_source',
        { max_in_flight_per_source: 2.5 },
        `${PATH}.max_in_flight_per_source: must be a positive integer`,
      ],
    ] as const) {
      it(`refuses ${label}`, () => {
        expect(complaint(raw)).to.equal(message);
      });
    }
  });
});
