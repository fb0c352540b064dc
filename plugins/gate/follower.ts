/**
 * The gate of a follower (`role: follower`): it judges nothing and relays each submission to its
 * validator's ingress (`relay_url`), whose gate judges it; without a relay it refuses them. A
 * frame transaction's gas estimate (estimation.ts) is relayed likewise: the follower keeps no
 * pool to run it; without a relay it is not supported here (the EL would estimate something else).
 */
import {
  errors,
  LIMIT_EXCEEDED,
  RpcFailure,
  SUBMISSION_ONLY,
  SYNC_SUBMISSION_METHOD,
  type Answer,
  type Plugin,
  type RequestContext,
  type Upstream,
  type Verdict,
} from '../../src/plugin.js';
import { ESTIMATION_METHODS, isEstimation } from './estimation.js';
import { forwardSubmission, readRawTransaction } from './submission/raw-transaction.js';
import { rawParams } from './submission/sync.js';

const FOLLOWER_METHODS: ReadonlySet<string> = new Set([...SUBMISSION_ONLY, ...ESTIMATION_METHODS]);

export function createFollower(relay: Upstream | undefined): Plugin {
  return {
    name: 'gate',
    methods: FOLLOWER_METHODS,
    handle({ request, peer }: RequestContext): Verdict | Promise<Verdict> {
      // The validator sees this follower as the peer: it must learn whose request it is, or
      // every user of the follower shares one bucket there (list the follower in the
      // validator's trusted_proxies).
      const earlier = peer.headers['x-forwarded-for'];
      const forwardedFor = typeof earlier === 'string' && earlier !== '' ? `${earlier}, ${peer.address}` : peer.address;
      const headers = { 'x-forwarded-for': forwardedFor };
      if (isEstimation(request.method, request.params)) {
        if (relay === undefined) return { error: errors.notSupportedByIngress(request.method) };
        return relay.call(request.method, (request.params ?? []) as unknown[], headers).then(relayed, (err: unknown) => {
          if (err instanceof RpcFailure) return { error: errors.upstreamUnavailable() };
          throw err;
        });
      }
      if (!SUBMISSION_ONLY.has(request.method)) return undefined;
      const raw = readRawTransaction(rawParams(request.params, request.method));
      if (relay === undefined) return { error: errors.followerRefusesSubmissions() };
      if (request.method === SYNC_SUBMISSION_METHOD) {
        // The validator's gate judges it and waits for the receipt; its answer comes back as given.
        return relay.call(SYNC_SUBMISSION_METHOD, request.params as unknown[], headers).then(relayed, (err: unknown) => {
          if (err instanceof RpcFailure) return { error: errors.submissionUnavailable() };
          throw err;
        });
      }
      return forwardSubmission(relay, raw, headers).then(relayed);
    },
  };
}

/** The validator's -32005 keeps its HTTP 429 and Retry-After on the way back through a follower. */
function relayed(answer: Answer): Answer {
  if (!('error' in answer) || answer.error.code !== LIMIT_EXCEEDED) return answer;
  const retryAfterMs = (answer.error.data as { retry_after_ms?: unknown } | undefined)?.retry_after_ms;
  return typeof retryAfterMs === 'number' ? { error: { ...answer.error, httpStatus: 429, retryAfterMs } } : answer;
}
