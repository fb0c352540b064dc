/**
 * rate-limit: token buckets per source, then host-wide (spec 4.4, 7, 8). A source over its own
 * quota is refused before the host bucket is touched, so it cannot drain the host's capacity
 * for everyone else. Over quota: -32005 with HTTP 429, a Retry-After header and
 * `data.retry_after_ms`.
 *
 * Submissions (`eth_sendRawTransaction`) and reads have separate buckets; a read costs
 * `method_costs[method]` tokens (default 1), so one client cannot monopolise the EL with
 * `eth_getLogs` and `eth_call`. A submission costs 1 token here, and keeps the request's tab
 * (`ctx.tab`) so that the gate can take more from the same buckets once it knows the work (a frame
 * transaction's validation prefix gas); so does a read priced by its size (`PRICED_BY_SIZE`:
 * eth_feeHistory, taken by fee-rewrite). One take never exceeds the bucket's burst. A class whose
 * buckets are not configured is not limited.
 *
 * On a submission's tab the gate also owes, as debt, the time its judgement took in the worker
 * pool once it is measured (a price set up front from declared gas cannot follow what VERIFY code
 * really costs). A submission records `SOURCE` too: the gate serves its pool's queue per source.
 *
 * A source may also hold at most `max_in_flight_per_source` requests open at once (a slot is
 * taken when a request passes, released by the tab's close hook): tokens price what
 * a source starts, this bounds what it holds, such as EL connections kept by answers it is slow
 * to read. Counted per process.
 *
 * Gas-heavy reads (eth_call, eth_estimateGas, eth_createAccessList, eth_simulateV1) are priced
 * by the gas they ask for (`reads.gas_per_token`, heavy.ts), and a source may hold at most
 * `max_heavy_in_flight_per_source` of them open: the EL's time they take is bounded by slots,
 * as the connections a source holds are. Once answered, the EL time one took beyond what it paid
 * (`reads.el_ms_per_token`) is charged to the source as debt (the EL time the core records on
 * the tab).
 *
 * Refusals are work too (decision 0017). Each source has, per class, an allowance of refusals
 * for its own limits (its bucket, its in-flight caps) as large as its quota (`burst`, then
 * `rate_per_second`; at least `REFUSALS_FLOOR`), counted in this process, in debt at most a
 * second. Past it, a refusal tells the server to read nothing more from the connection it was
 * refused on until the allowance holds one again (`holdMs`, src/refusal-hold.ts): a client that
 * asks again at once instead of waiting costs about its quota in refusals. The allowance never changes what a request is told to wait, nor what it
 * costs: clients that wait as told are admitted at the quota however many requests they have open.
 *
 * Reads: the TCP peer and `X-Forwarded-For` (from `trusted_proxies` only; see source.ts), an API
 * key (bearer or path, api-keys.ts; a key presented here counts as its tenant), fact `operator`.
 * Order: after allowlist (quota is spent only on allowed calls), before gate.
 */
import {
  errors,
  GAS_HEAVY_METHODS,
  MemoryBuckets,
  OPERATOR,
  PRICED_BY_SIZE,
  SOURCE,
  SUBMISSION_ONLY,
  type LabelledCounter,
  type RequestTab,
  type PluginEnv,
  type PluginModule,
  type RequestContext,
  type Verdict,
} from '../../src/plugin.js';
import { Bucket, hostedBucket, type BucketSpec } from './bucket.js';
import { SyncState } from './fleet-sync.js';
import { elTimeCharge, heavyCost } from './heavy.js';
import { parseRateLimitOptions, type RateLimitOptions, type TrafficLimits } from './options.js';
import { PROOF_METHOD, proofCost } from './proof-cost.js';
import { Slots } from './slots.js';
import { type ApiKey, presentedKey } from './api-keys.js';
import { forwardedWarning } from './forwarded-warning.js';
import { createSourceResolver } from './source.js';

const BODY_BYTES_PER_TOKEN = 4 * 1024;
/** The least allowance of refusals: a small quota's client that retries a few times too soon is not held for it. */
const REFUSALS_FLOOR = { ratePerSecond: 32, burst: 64 };
/** What a source at its in-flight cap is told to wait: slots free as answers close, not on a clock. */
const IN_FLIGHT_RETRY_MS = 1_000;

interface Buckets {
  readonly name: string;
  readonly perSource: Bucket;
  readonly host: Bucket | undefined;
  /** Refusals each source may cost before it is held, in this process. */
  readonly refusals: MemoryBuckets;
  readonly costs: ReadonlyMap<string, number>;
  readonly gasPerToken: bigint | undefined;
  readonly elMsPerToken: number | undefined;
  /** The smallest burst of the class's buckets: the most one charge may take. */
  readonly burst: number;
}

export const rateLimit: PluginModule<RateLimitOptions> = {
  name: 'rate-limit',
  parseOptions: parseRateLimitOptions,
  shared: { 'rate-limit': hostedBucket },
  create(options, { shared, metrics, carried, log }) {
    const limited = metrics.counter(
      'svc_ingress_rate_limited_total',
      'Requests refused by rate limits, by traffic class and the bucket that ran dry.',
      ['class', 'scope'],
    );
    const sourceOf = createSourceResolver(options.trustedProxies, options.ipv6SourcePrefix);
    const untrustedForwarding = forwardedWarning(log);
    const isTrustedProxy = (address: string) => sourceOf.ofPeer(address) === null;
    const { bucket, buckets } = bucketMaker(shared, carried);
    const submissions = buckets('submissions', options.submissions);
    const reads = buckets('reads', options.reads);
    // A slot is taken before the buckets answer (a round trip to Redis or the primary, maybe):
    // concurrent requests must see each other's slots. The counts outlive a reload.
    const inFlight = new Slots(
      options.maxInFlightPerSource,
      carried.keep('rate-limit:in-flight', () => new Map<string, number>()),
    );
    const heavyInFlight = new Slots(
      options.maxHeavyInFlightPerSource,
      carried.keep('rate-limit:heavy-in-flight', () => new Map<string, number>()),
    );
    /** A refusal for the source's own limits: counted, and against its allowance of refusals. */
    const refused = (limits: Buckets, source: string, scope: 'source' | 'in-flight' | 'heavy-in-flight', retryAfterMs: number) => {
      limited.inc(limits.name, scope);
      return { error: errors.rateLimited(scope, retryAfterMs, limits.refusals.chargeAndWait(source, 1)) };
    };

    // The source's own bucket first, then the host's; continuations rather than awaits, so a
    // read stays synchronous when the buckets are in this process.
    const limit = (limits: Buckets, source: string, cost: number): Verdict | Promise<Verdict> =>
      limits.perSource.consume(source, cost, (own): Verdict | Promise<Verdict> => {
        if (!own.ok) return refused(limits, source, 'source', own.retryAfterMs);
        if (limits.host === undefined) return undefined;
        return limits.host.consume('host', cost, (host): Verdict => {
          if (host.ok) return undefined;
          limited.inc(limits.name, 'host');
          return { error: errors.rateLimited('host', host.retryAfterMs) };
        });
      });

    const keyRequests = metrics.counter(
      'svc_ingress_api_key_requests_total',
      'Requests presenting an API key, by key name ("unknown": a key not configured, answered 401).',
      ['key'],
    );
    /** Each key's buckets per class, made on its first request: its own per-source bucket, the class's host-wide one. */
    const keyed = new Map<string, Buckets>();
    const keyedLimits = (key: ApiKey, submission: boolean, limits: Buckets): Buckets => {
      const name = `${limits.name}:key:${key.name}`;
      let made = keyed.get(name);
      if (made === undefined) {
        const traffic = (submission ? options.submissions : options.reads)!;
        const spec = (submission ? key.submissions : key.reads) ?? traffic.perSource;
        made = { ...limits, perSource: bucket(name, spec), burst: Math.min(spec.burst, traffic.host?.burst ?? Infinity) };
        keyed.set(name, made);
      }
      return made;
    };
    /** A key not configured: 401, counted against the sender's address and its allowance of refusals. */
    const unknownKey = (limits: Buckets, source: string): Verdict => {
      keyRequests.inc('unknown');
      return { error: errors.unknownApiKey(limits.refusals.chargeAndWait(source, 1)) };
    };

    const limiter: Limiter = {
      inFlight,
      heavyInFlight,
      refused,
      limit,
      keyRequests,
      warnForwarding: (peer) => untrustedForwarding(peer.address, peer.headers, isTrustedProxy),
    };
    const every = [submissions, reads].flatMap((limits) => (limits === undefined ? [] : [limits.perSource, limits.host]));
    return {
      name: 'rate-limit',
      close: async () => {
        for (const bucket of [...every, ...[...keyed.values()].map((limits) => limits.perSource)]) bucket?.close();
      },
      connectionSource: sourceOf.ofPeer,
      requestSource: (peer) => sourceOf(peer.address, peer.headers['x-forwarded-for']),
      // Receiving and parsing are the work a large body costs, whatever it turns out to be (a
      // batch of 170,000 empty arrays, 510 KB, took ~40 ms): one read token per 4 KiB past the
      // first, of its declared length, before a byte of it is read. An ordinary request is far
      // below; a maximum-size raw transaction (256 KiB of hex) pays 63.
      admitBody(peer, bytes): Verdict | Promise<Verdict> {
        const extra = Math.ceil(bytes / BODY_BYTES_PER_TOKEN) - 1;
        if (extra <= 0 || reads === undefined) return undefined;
        return limit(reads, sourceOf(peer.address, peer.headers['x-forwarded-for']), Math.min(extra, reads.burst));
      },
      handle(ctx: RequestContext): Verdict | Promise<Verdict> {
        const { request, peer, facts } = ctx;
        const submission = SUBMISSION_ONLY.has(request.method);
        const classLimits = submission ? submissions : reads;
        // The gate serves its pool per source, behind a trusted proxy too: named even when
        // submissions are not limited.
        if (classLimits === undefined) {
          if (submission) facts.set(SOURCE, sourceOf(peer.address, peer.headers['x-forwarded-for']));
          return undefined;
        }
        const presented =
          options.apiKeys.size === 0 ? undefined : presentedKey(options.apiKeys, peer.headers, peer.path, facts.get(OPERATOR) === true);
        if (presented === 'unknown') return unknownKey(classLimits, sourceOf(peer.address, peer.headers['x-forwarded-for']));
        if (presented === undefined) {
          return limitRequest(limiter, ctx, classLimits, sourceOf(peer.address, peer.headers['x-forwarded-for']), submission);
        }
        return limitRequest(limiter, ctx, keyedLimits(presented, submission, classLimits), `key:${presented.name}`, submission, presented);
      },
    };
  },
};

/** A class's allowance of refusals per source: its quota, at least REFUSALS_FLOOR. */
function refusalAllowance({ perSource }: TrafficLimits) {
  return {
    ratePerSecond: Math.max(perSource.ratePerSecond, REFUSALS_FLOOR.ratePerSecond),
    burst: Math.max(perSource.burst, REFUSALS_FLOOR.burst),
  };
}

/** A request counted against `source` in `limits`: slots, then tokens. */
function limitRequest(
  limiter: Limiter,
  { request, peer, facts, tab }: RequestContext,
  limits: Buckets,
  source: string,
  submission: boolean,
  key?: ApiKey,
): Verdict | Promise<Verdict> {
  const { inFlight, heavyInFlight, refused, limit } = limiter;
  if (key === undefined) limiter.warnForwarding(peer);
  else limiter.keyRequests.inc(key.name);
  const heavy = !submission && GAS_HEAVY_METHODS.has(request.method);
  const releaseSlot = inFlight.take(source);
  if (releaseSlot === undefined) return refused(limits, source, 'in-flight', IN_FLIGHT_RETRY_MS);
  const releaseHeavy = heavy ? heavyInFlight.take(source) : undefined;
  if (heavy && releaseHeavy === undefined) {
    releaseSlot();
    return refused(limits, source, 'heavy-in-flight', IN_FLIGHT_RETRY_MS);
  }
  const release = () => {
    releaseSlot();
    releaseHeavy?.();
  };
  // Not for ordinary reads: every fact is work on the read path. The gate's pool and the
  // heavy reads' turns are served per source.
  if (submission || heavy) facts.set(SOURCE, source);
  const least = limits.costs.get(request.method) ?? 1;
  const cost =
    heavy && limits.gasPerToken !== undefined
      ? heavyCost(request, facts, limits.gasPerToken, least, limits.burst)
      : request.method === PROOF_METHOD
        ? proofCost(request, least, limits.burst)
        : least;
  // Only a submission, a gas-heavy read or one priced by its size keeps the tab: an ordinary
  // read's tab stays empty, no work on the read path. Later plugins take what they price once
  // decoded (the gate: a frame's prefix gas) and owe what they measured (its pool time).
  const bySize = PRICED_BY_SIZE.has(request.method);
  if (submission || heavy || bySize) {
    const owe = (tokens: number) => limits.perSource.charge(source, tokens);
    tab.keep({
      take: submission || bySize ? (tokens) => limit(limits, source, Math.min(tokens, limits.burst)) : undefined,
      owe: submission || heavy ? owe : undefined,
      elTime: heavy && limits.elMsPerToken !== undefined ? elTimeCharge(limits.elMsPerToken, cost, owe) : undefined,
    });
  }
  // A keyed request names its tenant everywhere a source is read (the access log too).
  if (key !== undefined && !(submission || heavy)) facts.set(SOURCE, source);
  const verdict = limit(limits, source, cost);
  if (!(verdict instanceof Promise)) return settle(verdict, release, tab);
  return verdict.then(
    (answered) => settle(answered, release, tab),
    (err: unknown) => {
      release();
      throw err;
    },
  );
}

/** What limiting one request uses of the plugin's state, built once in `create`. */
interface Limiter {
  /** Requests each source holds open, and the gas-heavy ones among them. */
  readonly inFlight: Slots;
  readonly heavyInFlight: Slots;
  /** A refusal for the source's own limits: counted, and against its allowance of refusals. */
  readonly refused: (limits: Buckets, source: string, scope: 'source' | 'in-flight' | 'heavy-in-flight', retryAfterMs: number) => Verdict;
  /** `cost` tokens from the source's bucket, then the host's. */
  readonly limit: (limits: Buckets, source: string, cost: number) => Verdict | Promise<Verdict>;
  readonly keyRequests: LabelledCounter;
  /** Warns (once per peer, throttled) of forwarding headers from a peer not trusted. */
  readonly warnForwarding: (peer: RequestContext['peer']) => void;
}

/** Keeps the slot until the response closes; gives it back now if refused or already closed. */
function settle(verdict: Verdict, release: () => void, tab: RequestTab): Verdict {
  if (verdict !== undefined) release();
  else tab.onClose(release);
  return verdict;
}

/**
 * A class's buckets, as a reload keeps them: bucket levels (resized to new numbers, here and in
 * the primary), what the fleet's syncs took and saw, and the allowance of refusals.
 */
function bucketMaker(shared: PluginEnv['shared'], carried: PluginEnv['carried']) {
  const bucket = (name: string, spec: BucketSpec) => {
    const made: Bucket = new Bucket(
      name,
      spec,
      shared,
      carried.keep(
        `rate-limit:${name}`,
        () => new MemoryBuckets(spec),
        () => made.adopt(spec),
      ),
      carried.keep(`rate-limit:${name}:sync`, () => new SyncState()),
    );
    return made;
  };
  const buckets = (name: string, limits: TrafficLimits | undefined): Buckets | undefined =>
    limits && {
      name,
      perSource: bucket(`${name}:source`, limits.perSource),
      host: limits.host && bucket(`${name}:host`, limits.host),
      refusals: carried.keep(
        `rate-limit:${name}:refusals`,
        () => new MemoryBuckets(refusalAllowance(limits)),
        (kept) => kept.resize(refusalAllowance(limits)),
      ),
      costs: limits.methodCosts,
      gasPerToken: limits.gasPerToken,
      elMsPerToken: limits.elMsPerToken,
      burst: Math.min(limits.perSource.burst, limits.host?.burst ?? Infinity),
    };
  return { bucket, buckets };
}
