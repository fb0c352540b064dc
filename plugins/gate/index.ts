/**
 * gate: answers every `eth_sendRawTransaction` (spec 4.3, 4.4, 7). What it admits is
 * forwarded to the submission target and answered with keccak-256 of the raw bytes; what it
 * refuses gets a synchronous -32000 with a reason and never reaches consensus.
 *
 * The order of checks, cheapest first; each stage runs only if every earlier one passed:
 *
 *   params shape ─► duplicate window ─► cached verdict        (memory only)
 *     ─► decode, static checks, signatures                    (CPU, no state)
 *     ─► head state: nonce, in-flight, base fee, payer funds  (EL reads, shared per head)
 *     ─► EL validation: svc_validateTransaction               (EL simulation)
 *     ─► forward to the submission target
 *
 * Fails closed: an EL that cannot be read gives -32603 and nothing is forwarded.
 * Order: after size-limit (sizes capped before decoding), allowlist and rate-limit.
 */
import { keccak256 } from 'ethers';
import { errors } from '../../src/errors.js';
import type { Answer } from '../../src/jsonrpc.js';
import type { PluginModule, RequestContext, Verdict } from '../../src/plugin.js';
import { Upstream } from '../../src/upstream.js';
import { checkAdmission, type Release } from './admission.js';
import { GateCounters } from './counters.js';
import { decodeSubmission } from './decode.js';
import { createElValidation, ExecutionLayerRefusal } from './el-validation.js';
import { forwardSubmission } from './forward.js';
import { InFlight } from './in-flight.js';
import { parseGateOptions, type GateOptions } from './options.js';
import { Refusal } from './refusal.js';
import { readRawTransaction } from './shape.js';
import { HeadState, Unavailable } from './state.js';
import { VerdictCache, type CachedRefusal } from './verdict-cache.js';

export const gate: PluginModule<GateOptions> = {
  name: 'gate',
  parseOptions: parseGateOptions,
  create(options, { execution, submit, log }) {
    const counters = new GateCounters();
    if (options.role === 'follower') {
      const relay = options.relayUrl === undefined ? undefined : new Upstream({ ...execution.options, url: options.relayUrl });
      return {
        name: 'gate',
        counters,
        handle({ request }: RequestContext): Verdict | Promise<Verdict> {
          if (request.method !== 'eth_sendRawTransaction') return undefined;
          const raw = readRawTransaction(request.params);
          counters.seen++;
          if (relay === undefined) return { error: errors.followerRefusesSubmissions() };
          return forwardSubmission(relay, raw);
        },
        close: () => relay?.close(),
      };
    }

    const state = new HeadState(execution, options.headCacheMs);
    const inFlight = new InFlight(options.skipAfterBlocks);
    const cache = new VerdictCache(options);
    const validate = createElValidation(execution, options.validationMethod, options.validationRecheckMs);
    const judging = new Map<string, Promise<Answer>>();

    /** What the gate already said about these bytes, if it still holds. */
    const replay = (hash: string): Answer | Promise<Answer | undefined> | undefined => {
      if (cache.isAdmitted(hash)) {
        counters.refused('already-known');
        return { error: errors.alreadyKnown() };
      }
      const cached = cache.refusal(hash);
      if (cached === undefined) return undefined;
      const replayed = () => {
        counters.cachedVerdicts++;
        return { error: wireError(cached, true) };
      };
      if (cached.head === undefined) return replayed();
      // A state-bound verdict holds only at the head it was judged at.
      return state.latest().then((head) => (head.number === cached.head ? replayed() : undefined));
    };

    const judge = async (raw: string, hash: string): Promise<Answer> => {
      // Undefined while the verdict depends only on the bytes; the head number once state is read.
      let head: bigint | undefined;
      let release: Release | undefined;
      try {
        const sub = decodeSubmission(raw, hash, options);
        const latest = await state.latest();
        head = latest.number;
        release = await checkAdmission(sub, latest, state, inFlight, options);
        await validate(sub);
      } catch (err) {
        release?.();
        if (err instanceof Unavailable) {
          log.warn('gate: execution layer unavailable, submission refused', { error: err.message });
          return { error: errors.validationUnavailable() };
        }
        if (!(err instanceof Refusal)) throw err;
        const refusal: CachedRefusal = { reason: err.reason, detail: err.detail, byExecutionLayer: err instanceof ExecutionLayerRefusal, head };
        cache.refuse(hash, refusal);
        counters.refused(err.reason);
        return { error: wireError(refusal, false) };
      }
      let answer: Answer;
      try {
        answer = await forwardSubmission(submit, raw);
      } catch (err) {
        release();
        throw err;
      }
      if ('error' in answer) {
        release();
        counters.refused('submit-rejected');
        return answer;
      }
      cache.admit(hash);
      counters.admitted++;
      return answer;
    };

    /** Judges the bytes once: the same bytes twice at once wait for the first verdict. */
    const judgeOnce = (raw: string, hash: string): Promise<Answer> => {
      const running = judging.get(hash);
      if (running !== undefined) return running.then((first) => ('result' in first ? { error: errors.alreadyKnown() } : first));
      const verdict = judge(raw, hash).finally(() => judging.delete(hash));
      judging.set(hash, verdict);
      return verdict;
    };

    return {
      name: 'gate',
      counters,
      handle({ request }: RequestContext): Verdict | Promise<Verdict> {
        if (request.method !== 'eth_sendRawTransaction') return undefined;
        const raw = readRawTransaction(request.params);
        counters.seen++;
        const hash = keccak256(raw);
        if (judging.has(hash)) return judgeOnce(raw, hash);
        const earlier = replay(hash);
        if (earlier === undefined) return judgeOnce(raw, hash);
        if (!(earlier instanceof Promise)) return earlier;
        return earlier.then((answer) => answer ?? judgeOnce(raw, hash), () => ({ error: errors.validationUnavailable() }));
      },
    };
  },
};

function wireError(refusal: CachedRefusal, cached: boolean) {
  return refusal.byExecutionLayer
    ? errors.rejectedByExecutionLayer(refusal.detail, cached)
    : errors.rejected(refusal.reason, refusal.detail, cached);
}
