/**
 * gate: answers every `eth_sendRawTransaction` (spec 4.3, 4.4, 7). What it admits is
 * forwarded to the submission target and answered with keccak-256 of the raw bytes; what it
 * refuses gets a synchronous -32000 with a reason and never reaches consensus.
 *
 * The order of checks, cheapest first; each stage runs only if every earlier one passed:
 *
 *   params shape ─► duplicate window ─► cached verdict        (memory, or the fleet's Redis)
 *     ─► decode, static checks                                (CPU, no state)
 *     ─► frame signatures, priced by prefix gas first          (worker threads)
 *     ─► head state: nonce, in-flight, base fee, payer funds  (EL reads, shared per head)
 *     ─► frame transactions: the validation prefix            (direct evaluation, or the EVM)
 *     ─► the EL's validation method, when configured          (off by default)
 *     ─► forward to the submission target
 *
 * Fails closed: an EL that cannot be read gives -32603 and nothing is forwarded.
 * Order: after size-limit (sizes capped before decoding), allowlist and rate-limit.
 */
import {
  CLOSED,
  errors,
  EXTRA_COST,
  LIMIT_EXCEEDED,
  RpcFailure,
  SUBMISSION_ONLY,
  SYNC_SUBMISSION_METHOD,
  throttledWarning,
  type Answer,
  type Facts,
  type PluginModule,
  type RequestContext,
  type Verdict,
} from '../../src/plugin.js';
import { checkAdmission, type Release } from './admission.js';
import { decodeSubmission, type Submission } from './decode.js';
import { stillHolds } from './dependencies.js';
import { createElValidation, ExecutionLayerRefusal } from './el-validation.js';
import { forwardSubmission } from './forward.js';
import { createLedger, MemoryLedger, type LedgerOptions } from './ledger.js';
import { parseGateOptions, type GateOptions } from './options.js';
import { Refusal } from './refusal.js';
import { createWorkPool, PoolBusy } from './work-pool.js';
import { readRawTransaction, type RawTransaction } from './shape.js';
import { isPrecompile } from './simulation/fork.js';
import { HeadState, Unavailable, type Head } from './state.js';
import { judgePrefix, type PrefixJudge } from './validation-prefix.js';
import type { CachedRefusal } from './verdict-cache.js';

export const gate: PluginModule<GateOptions> = {
  name: 'gate',
  parseOptions: parseGateOptions,
  shared: { 'gate-ledger': (init) => new MemoryLedger(init as LedgerOptions) },
  create(options, { stateReads, submit, relayTo, log, shared, metrics }) {
    if (options.role === 'follower') {
      const relay = options.relayUrl === undefined ? undefined : relayTo(options.relayUrl);
      return {
        name: 'gate',
        methods: SUBMISSION_ONLY,
        handle({ request, peer }: RequestContext): Verdict | Promise<Verdict> {
          if (!SUBMISSION_ONLY.has(request.method)) return undefined;
          const raw = readRawTransaction(rawParams(request.params, request.method));
          if (relay === undefined) return { error: errors.followerRefusesSubmissions() };
          // The validator sees this follower as the peer: it must learn whose submission it is,
          // or every user of the follower shares one bucket there (list the follower in the
          // validator's trusted_proxies).
          const earlier = peer.headers['x-forwarded-for'];
          const forwardedFor = typeof earlier === 'string' && earlier !== '' ? `${earlier}, ${peer.address}` : peer.address;
          const headers = { 'x-forwarded-for': forwardedFor };
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

    const state = new HeadState(stateReads, options.headCacheMs);
    const ledger = createLedger(shared, options);
    const verdicts = metrics.counter(
      'svc_ingress_gate_verdicts_total',
      'Submission verdicts: admitted, refused (by reason), cached (a refusal replayed).',
      ['verdict', 'reason'],
    );
    const validate = createElValidation(stateReads, options.validationMethod);
    const pool = createWorkPool(options.threads, options.queueMax, { execution: stateReads.options });
    const prefixJudge: PrefixJudge = {
      isPrecompile,
      simulate: (sub, head) => pool.simulate({ tx: sub.frame!.tx, facts: sub.frame!.facts, head }),
    };
    const judging = new Map<string, Promise<Answer>>();
    const unavailableWarning = throttledWarning(log, 'gate: execution layer unavailable, submissions refused (throttled: count since the last line)');

    /** What the gate already said about these bytes, if it still holds. */
    const replay = async (hash: string): Promise<Answer | undefined> => {
      if (await ledger.isAdmitted(hash)) {
        verdicts.inc('refused', 'already-known');
        return { error: errors.alreadyKnown() };
      }
      const cached = await ledger.refusal(hash);
      if (cached === undefined) return undefined;
      // A state-bound verdict holds at the head it was judged at; a validation-prefix refusal
      // also at a later head where everything it read is unchanged.
      if (cached.head !== undefined) {
        const latest = await state.latest();
        if (cached.head !== latest.number && !(cached.dependencies !== undefined && (await stillHolds(cached.dependencies, state, latest)))) {
          return undefined;
        }
      }
      verdicts.inc('cached', cached.reason);
      return { error: wireError(cached, true) };
    };

    /** `sync`: EIP-7966's variant, answered with the receipt (`timeoutMs` to wait for it). */
    const judge = async (raw: RawTransaction, facts: Facts, sync: { timeoutMs: number } | undefined): Promise<Answer> => {
      const extraCost = facts.get(EXTRA_COST);
      const { hash } = raw;
      // Undefined while the verdict depends only on the bytes; the head number once state is read.
      let head: bigint | undefined;
      let release: Release | undefined;
      let sub: Submission;
      let judgedAt: Head;
      try {
        sub = decodeSubmission(raw, options);
        if (sub.frame !== undefined) {
          const overQuota = await extraCost?.(validationTokens(sub.frame.facts.prefixGas) - 1);
          if (overQuota !== undefined) return overQuota;
          await pool.verify(sub.frame.tx);
        }
        /** The verdict against one head; holds an in-flight slot when it admits. */
        const atHead = async (latest: Head): Promise<Release> => {
          head = latest.number;
          judgedAt = latest;
          const held = await checkAdmission(sub, latest, state, ledger, options);
          try {
            if (sub.frame !== undefined) await judgePrefix(sub, latest, state, prefixJudge);
            await validate?.(sub);
          } catch (err) {
            await held();
            throw err;
          }
          return held;
        };
        const cached = await state.latest();
        try {
          release = await atHead(cached);
        } catch (err) {
          // A refusal that rests on state is confirmed on a fresh head before it is given: the
          // cached one may be up to head_cache_ms old (a transfer sent right after its funding
          // receipt would be refused "balance 0").
          if (!(err instanceof Refusal)) throw err;
          const fresh = await state.fresh();
          if (fresh.number === cached.number) throw err;
          release = await atHead(fresh);
        }
      } catch (err) {
        await release?.();
        if (err instanceof PoolBusy) return { error: errors.rateLimited('host', POOL_BUSY_RETRY_MS) };
        if (err instanceof Unavailable) {
          unavailableWarning({ error: err.message });
          return { error: errors.validationUnavailable() };
        }
        if (!(err instanceof Refusal)) throw err;
        const refusal: CachedRefusal = {
          reason: err.reason,
          detail: err.detail,
          extra: err.extra,
          byExecutionLayer: err instanceof ExecutionLayerRefusal,
          head,
          ...(err.dependencies === undefined ? {} : { dependencies: err.dependencies }),
        };
        await ledger.remember(hash, refusal);
        verdicts.inc('refused', err.reason);
        return { error: wireError(refusal, false) };
      }
      // EIP-7966: a nonce ahead of the sender's next one is not accepted at all, with that nonce.
      if (sync !== undefined) {
        const next = (await state.account(sub.sender, judgedAt!)).nonce;
        if (sub.nonce > next) {
          await release();
          return { error: errors.syncNonceGap(next) };
        }
      }
      // A client gone while the gate judged (closed, or half-closed: Node aborts the request then)
      // would never learn that its transaction was ordered: it is not forwarded.
      if (facts.get(CLOSED)) {
        await release();
        return ABANDONED;
      }
      // Claimed across the fleet before forwarding: another instance admitting the same bytes
      // at the same moment gets "already known" instead of forwarding them twice.
      if (!(await ledger.claim(hash))) {
        await release();
        verdicts.inc('refused', 'already-known');
        return { error: errors.alreadyKnown() };
      }
      let answer: Answer;
      try {
        answer = await forwardSubmission(submit, raw);
      } catch (err) {
        await Promise.all([release(), ledger.unclaim(hash)]);
        throw err;
      }
      if ('error' in answer) {
        await Promise.all([release(), ledger.unclaim(hash)]);
        verdicts.inc('refused', 'submit-rejected');
        return answer;
      }
      verdicts.inc('admitted', '');
      metrics.sequenced();
      return sync === undefined ? answer : receiptOf(hash, sync.timeoutMs, facts);
    };

    /**
     * EIP-7966: the receipt once the EL has it, or error 4 at the timeout. The receipt is asked
     * for once per new head (the head read is the one every submission shares), not polled.
     */
    const receiptOf = async (hash: string, timeoutMs: number, facts: Facts): Promise<Answer> => {
      const deadline = Date.now() + timeoutMs;
      let seen = -1n;
      while (Date.now() < deadline && !facts.get(CLOSED)) {
        const latest = await state.latest();
        if (latest.number !== seen) {
          seen = latest.number;
          const answer = await stateReads.call('eth_getTransactionReceipt', [hash]);
          if ('error' in answer || answer.result !== null) return answer;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(RECEIPT_WAIT_STEP_MS, Math.max(0, deadline - Date.now()))));
      }
      return { error: errors.syncTimeout(hash) };
    };

    /** Judges the bytes once: the same bytes twice at once wait for the first verdict. */
    const judgeOnce = (raw: RawTransaction, facts: Facts, sync: { timeoutMs: number } | undefined): Promise<Answer> => {
      // The two variants answer differently: each is judged once on its own.
      const key = sync === undefined ? raw.hash : `sync:${raw.hash}`;
      const running = judging.get(key);
      if (running !== undefined) {
        // The same bytes from a client that is still there are judged afresh if the first one left.
        return running.then((first) =>
          first === ABANDONED ? judgeOnce(raw, facts, sync) : 'result' in first ? { error: errors.alreadyKnown() } : first,
        );
      }
      const verdict = judge(raw, facts, sync).finally(() => judging.delete(key));
      judging.set(key, verdict);
      return verdict;
    };

    return {
      name: 'gate',
      methods: SUBMISSION_ONLY,
      handle({ request, facts }: RequestContext): Verdict | Promise<Verdict> {
        if (!SUBMISSION_ONLY.has(request.method)) return undefined;
        const sync = request.method === SYNC_SUBMISSION_METHOD ? { timeoutMs: syncTimeoutOf(request.params, options) } : undefined;
        const raw = readRawTransaction(rawParams(request.params, request.method));
        if (judging.has(raw.hash)) return judgeOnce(raw, facts, sync);
        return replay(raw.hash).then(
          (earlier) => earlier ?? judgeOnce(raw, facts, sync),
          (err) => {
            if (!(err instanceof Unavailable)) throw err;
            return { error: errors.validationUnavailable() };
          },
        );
      },
      close: () => pool.close(),
    };
  },
};

/** The params that must be the raw transaction alone: eth_sendRawTransactionSync's second is its timeout. */
function rawParams(params: unknown, method: string): unknown {
  return method === SYNC_SUBMISSION_METHOD && Array.isArray(params) && params.length === 2 ? params.slice(0, 1) : params;
}

/** How often a waiting eth_sendRawTransactionSync looks for a new head (the head read itself is shared). */
const RECEIPT_WAIT_STEP_MS = 50;

/** EIP-7966: the timeout asked for, if it is a positive integer within the maximum; otherwise the default. */
function syncTimeoutOf(params: unknown, options: GateOptions): number {
  const asked = Array.isArray(params) ? params[1] : undefined;
  return typeof asked === 'number' && Number.isInteger(asked) && asked > 0 && asked <= options.syncTimeoutMaxMs ? asked : options.syncTimeoutMs;
}

/** What a judgement whose client left before the forward ends with (nobody reads it). */
const ABANDONED: Answer = { error: errors.submissionUnavailable() };

/** How long a client should wait when the signature pool is full. */
const POOL_BUSY_RETRY_MS = 1_000;
/**
 * Rate-limit tokens a frame transaction's validation costs: one per 10,000 gas of its prefix
 * (frames' execution limits, run in the EVM or evaluated directly, plus the entries'
 * verification gas), at least one. At most 10 within the 100,000 budget.
 */
const GAS_PER_TOKEN = 10_000n;
const validationTokens = (prefixGas: bigint) => Math.max(1, Number((prefixGas + GAS_PER_TOKEN - 1n) / GAS_PER_TOKEN));

/** The validator's -32005 keeps its HTTP 429 and Retry-After on the way back through a follower. */
function relayed(answer: Answer): Answer {
  if (!('error' in answer) || answer.error.code !== LIMIT_EXCEEDED) return answer;
  const retryAfterMs = (answer.error.data as { retry_after_ms?: unknown } | undefined)?.retry_after_ms;
  return typeof retryAfterMs === 'number' ? { error: { ...answer.error, httpStatus: 429, retryAfterMs } } : answer;
}

function wireError(refusal: CachedRefusal, cached: boolean) {
  return refusal.byExecutionLayer
    ? errors.rejectedByExecutionLayer(refusal.detail, cached)
    : errors.rejected(refusal.reason, refusal.detail, cached, refusal.extra);
}
