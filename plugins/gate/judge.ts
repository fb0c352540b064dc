/**
 * The validator gate's verdict on one raw transaction, in three stages, each ending in an
 * `Outcome` value (what the parts below them throw is classified at the stage's edge):
 * - `replay`: what the gate already said about these bytes (duplicate window, cached refusal);
 * - `decide`: decode, signatures, the head state, the validation prefix, the EL's opinion;
 *   an admission holds an in-flight slot;
 * - `admit`: claim the bytes across the fleet, forward them, answer (with the receipt for sync).
 * `conclude` turns an outcome into the answer, remembering refusals (answers.ts maps failures).
 * The same bytes judged twice at once wait for the first verdict.
 */
import {
  CLOSED,
  errors,
  type Answer,
  type LabelledCounter,
  type RequestContext,
  type ThrottledWarning,
  type Upstream,
} from '../../src/plugin.js';
import { checkAdmission, type Release } from './head/admission.js';
import { decodeSubmission, decodeSubmissionRecoveredBy, type Submission } from './submission/decode.js';
import { stillHolds } from './head/dependencies.js';
import type { ElValidation } from './head/el-validation.js';
import { answerFor, cachedRefusalOf, isNoVerdict, refusalError } from './answers.js';
import { Abandoned, describeFault, InFlightRefusal, Refusal, refuse, SyncNonceGap, Unavailable } from './errors.js';
import type { Ledger } from './ledger/ledger.js';
import type { GateOptions } from './options.js';
import { forwardSubmission, type RawTransaction } from './submission/raw-transaction.js';
import { isPrecompile } from '../../protocol/evm/index.js';
import { authoritiesOf, cryptoBackend, type StateDependencies } from '../../protocol/index.js';
import type { PendingFrame, Revalidator } from './head/revalidation.js';
import type { Head, HeadState } from './head/state.js';
import { receiptOf } from './submission/sync.js';
import { judgePrefix, type PrefixJudge } from './head/validation-prefix.js';
import type { SlotTurns } from './ledger/paymaster-turns.js';
import type { PoolJob, WorkPool } from './pool/work-pool.js';

export interface JudgeParts {
  readonly options: GateOptions;
  readonly state: HeadState;
  readonly ledger: Ledger;
  readonly pool: WorkPool;
  readonly validate: ElValidation | undefined;
  readonly submit: Upstream;
  readonly stateReads: Upstream;
  /** svc_ingress_gate_verdicts_total. */
  readonly verdicts: LabelledCounter;
  readonly sequenced: () => void;
  readonly unavailable: ThrottledWarning;
  /** An unexpected error while judging (a bug, or an EL answer nothing expected): logged throttled. */
  readonly bug: ThrottledWarning;
  /** Follows admitted frame transactions while they are pending (revalidation.ts). */
  readonly revalidator?: Revalidator;
  /** Turns at paymasters' one pending slot, between sources (paymaster-turns.ts). */
  readonly paymasterTurns?: SlotTurns;
}

/** EIP-7966's variant, answered with the receipt (`timeoutMs` to wait for it). */
export type Sync = { readonly timeoutMs: number } | undefined;

/** An admission: the decoded submission, the head it was judged at, its in-flight slot, and for a frame transaction what its prefix read. */
interface Admission {
  readonly sub: Submission;
  readonly head: Head;
  readonly release: Release;
  readonly dependencies?: StateDependencies;
}

/**
 * What a stage comes to: an admission (decide's, holding a slot); an answer as it stands (a
 * replayed verdict, over quota, the forward's); a refusal, a verdict on the transaction judged at
 * `head`, remembered; or a failure that is no verdict (answers.ts `isNoVerdict`), answered and
 * forgotten, or the forward's transport failure, thrown on to the core as before (counted as an
 * error, not a refusal).
 */
type Outcome =
  | { readonly admitted: Admission }
  | { readonly answer: Answer }
  | { readonly refused: Refusal; readonly head: bigint | undefined }
  | { readonly failed: unknown };
type Concluded = Exclude<Outcome, { readonly admitted: Admission }>;

/** A standard transaction's sender is recovered on the event loop only where that is native (~70 µs). */
const INLINE_RECOVERY = cryptoBackend.kind === 'native';

/** What a judgement whose client left before the forward ends with (nobody reads it). */
const ABANDONED: Answer = { error: errors.submissionUnavailable() };

/**
 * Rate-limit tokens a frame transaction's validation costs: one per 10,000 gas of its prefix
 * (frames' execution limits, run in the EVM or evaluated directly, plus the entries'
 * verification gas), at least one. At most 10 within the 100,000 budget.
 */
const GAS_PER_TOKEN = 10_000n;
const validationTokens = (prefixGas: bigint) => Math.max(1, Number((prefixGas + GAS_PER_TOKEN - 1n) / GAS_PER_TOKEN));
/**
 * What the gate's worker pool time costs once measured: the price up front assumes P256 entries
 * (~25 ms for the ten tokens of a full 100,000-gas prefix), so a token buys 2.5 ms of a thread.
 * Judgements that took longer than they paid for are charged the rest as the source's debt.
 */
export const POOL_MS_PER_TOKEN = 2.5;

/** One judgement's work in the pool, on behalf of `source`, with what it paid up front. */
interface Meter extends PoolJob {
  ms: number;
  paid: number;
}

const prefixJudgeFor = (pool: WorkPool, job: PoolJob): PrefixJudge => ({
  isPrecompile,
  simulate: (sub, head) => pool.simulate({ tx: sub.frame!.tx, facts: sub.frame!.facts, head }, job),
});

/** A pending frame transaction judged again at `head` (revalidation.ts): its payer's funds, then its prefix. */
export function rejudgeWith({ state, pool }: Pick<JudgeParts, 'state' | 'pool'>) {
  return async ({ sub, source }: PendingFrame, head: Head): Promise<StateDependencies> => {
    const payer = await state.account(sub.payer, head);
    if (payer.balance < sub.maxCost) refuse('payer-balance', `the payer ${sub.payer} cannot cover the maximum cost ${sub.maxCost} wei`);
    return judgePrefix(sub, head, state, prefixJudgeFor(pool, { source, gone: () => false, spent: () => {} }));
  };
}

/** Decoded here; a standard sender recovered in the pool where recovery runs in pure JS (~1.7 ms). */
async function decodeOf({ options, pool }: JudgeParts, raw: RawTransaction, job: PoolJob): Promise<Submission> {
  const sub = INLINE_RECOVERY
    ? decodeSubmission(raw, options)
    : // Not metered: one recovery costs the same whatever the sender sends (~1.7 ms), which the
      // submission's token prices; only work the sender can inflate is charged as measured.
      await decodeSubmissionRecoveredBy(raw, options, (task) => pool.recover(task, { ...job, spent: () => {} }));
  if (sub.authorizationCount === 0) return sub;
  // One authorization costs what the sender's recovery did, inline where that is native; more
  // are the sender's to multiply (up to ~670 in a transaction): in the pool, metered.
  const authorities =
    INLINE_RECOVERY && sub.authorizationCount === 1
      ? authoritiesOf(raw.bytes, options.chainId)
      : await pool.authorities({ bytes: raw.bytes, chainId: options.chainId }, job);
  return { ...sub, authorities };
}

/** What the gate already said of these bytes, or undefined: judge them. */
async function replay(parts: JudgeParts, hash: string): Promise<Concluded | undefined> {
  try {
    const earlier = await replayed(parts, hash);
    return earlier === undefined ? undefined : { answer: earlier };
  } catch (err) {
    if (err instanceof Unavailable) return { failed: err };
    throw err;
  }
}

async function replayed({ ledger, state, verdicts }: JudgeParts, hash: string): Promise<Answer | undefined> {
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
  return { error: refusalError(cached, true) };
}

/** What the gate reads of the request that asked (its client gone?) and charges to its tab. */
export type Asked = Pick<RequestContext, 'facts' | 'tab'>;

/** An admission, or what refuses it, or the failure that kept it from a verdict. */
async function decide(parts: JudgeParts, raw: RawTransaction, asked: Asked, sync: Sync, meter: Meter): Promise<Outcome> {
  const judged: { head?: bigint } = {};
  try {
    const decided = await admission(parts, raw, asked, sync, judged, meter);
    return 'release' in decided ? { admitted: decided } : { answer: decided };
  } catch (err) {
    if (err instanceof Refusal) return { refused: err, head: judged.head };
    if (isNoVerdict(err)) return { failed: err };
    return { refused: unexpected(parts, err), head: judged.head };
  }
}

/** An admission, or the over-quota answer; throws what refuses. `judged.head`: the head read, once state is. */
async function admission(
  parts: JudgeParts,
  raw: RawTransaction,
  asked: Asked,
  sync: Sync,
  judged: { head?: bigint },
  meter: Meter,
): Promise<Admission | Answer> {
  const { options, state, ledger, pool, validate } = parts;
  const sub = await decodeOf(parts, raw, meter);
  const prefixJudge = prefixJudgeFor(pool, meter);
  if (sub.frame !== undefined) {
    const tokens = validationTokens(sub.frame.facts.prefixGas);
    const overQuota = await asked.tab.take(tokens - 1);
    if (overQuota !== undefined) return overQuota;
    meter.paid = tokens;
    await pool.verify(sub.frame.tx, meter);
  }
  const atHead = async (head: Head): Promise<Admission> => {
    judged.head = head.number;
    // EIP-7966 answers any nonce ahead of the sender's next with its own error, before anything
    // is reserved or judged; the admission checks then leave nonces ahead to it.
    if (sync !== undefined) {
      const next = (await state.account(sub.sender, head)).nonce;
      if (sub.nonce > next) throw new SyncNonceGap(next);
    }
    const release = await checkAdmission(
      sub,
      head,
      state,
      ledger,
      sync === undefined ? options : { ...options, contiguousNonces: false },
      parts.paymasterTurns === undefined ? undefined : { source: meter.source, paymasters: parts.paymasterTurns },
    );
    let dependencies: StateDependencies | undefined;
    try {
      if (sub.frame !== undefined) dependencies = await judgePrefix(sub, head, state, prefixJudge);
      await validate?.(sub);
    } catch (err) {
      await release();
      throw err;
    }
    return { sub, head, release, dependencies };
  };
  const cached = await state.latest();
  try {
    return await atHead(cached);
  } catch (err) {
    // A refusal that rests on state is confirmed on a fresh head before it is given: the
    // cached one may be up to head_cache_ms old (a transfer sent right after its funding
    // receipt would be refused "balance 0", the next nonce after a receipt seen as a gap).
    if (!(err instanceof Refusal || err instanceof SyncNonceGap)) throw err;
    const fresh = await state.fresh();
    if (fresh.number === cached.number) throw err;
    return atHead(fresh);
  }
}

/**
 * The answer an outcome comes to: a refusal remembered for these bytes (unless it rests on what
 * is in flight), a failure mapped by answers.ts; one it does not map is thrown on to the core.
 */
async function conclude(parts: JudgeParts, hash: string, outcome: Concluded): Promise<Answer> {
  if ('answer' in outcome) return outcome.answer;
  if ('failed' in outcome) {
    const { failed } = outcome;
    if (failed instanceof Abandoned) return ABANDONED;
    if (failed instanceof Unavailable) parts.unavailable({ error: failed.message });
    const answer = answerFor(failed);
    if (answer === undefined) throw failed;
    return answer;
  }
  const { refused, head } = outcome;
  const refusal = cachedRefusalOf(refused, head);
  if (!(refused instanceof InFlightRefusal)) await parts.ledger.remember(hash, refusal);
  parts.verdicts.inc('refused', refused.reason);
  return { error: refusalError(refusal, false) };
}

/**
 * Any other error while judging is a classified refusal, cached like the rest (at the head it was
 * judged at, if any), naming only the error's class; what it was goes to the log, throttled.
 * A simulation's own are classified in the thread (pool/simulation/simulate.ts).
 */
function unexpected(parts: JudgeParts, err: unknown): Refusal {
  const { errorClass, bug } = describeFault(err);
  parts.bug({ bug });
  return new Refusal('gate-error', `judging failed unexpectedly (${errorClass})`);
}

async function admit(
  parts: JudgeParts,
  raw: RawTransaction,
  asked: Asked,
  sync: Sync,
  { sub, head, release, dependencies }: Admission,
  source: string,
): Promise<Concluded> {
  const { ledger, state, verdicts } = parts;
  // A client gone while the gate judged (closed, or half-closed: Node aborts the request then)
  // would never learn that its transaction was ordered: it is not forwarded.
  if (asked.facts.get(CLOSED)) {
    await release();
    return { failed: new Abandoned('the client left before its transaction was forwarded') };
  }
  // Claimed across the fleet before forwarding: another instance admitting the same bytes at
  // the same moment gets "already known" instead of forwarding them twice.
  if (!(await ledger.claim(raw.hash))) {
    await release();
    verdicts.inc('refused', 'already-known');
    return { answer: { error: errors.alreadyKnown() } };
  }
  let answer: Answer;
  try {
    answer = await forwardSubmission(parts.submit, raw);
  } catch (err) {
    await Promise.all([release(), ledger.unclaim(raw.hash)]);
    return { failed: err };
  }
  if ('error' in answer) {
    await Promise.all([release(), ledger.unclaim(raw.hash)]);
    verdicts.inc('refused', 'submit-rejected');
    return { answer };
  }
  verdicts.inc('admitted', '');
  parts.sequenced();
  // Ordered now: pending until a block after the head as it stands (skip_after_blocks from
  // there). Noted after the answer: the client does not wait for one more head read.
  void acknowledge(parts, sub, head, dependencies, source);
  return { answer: sync === undefined ? answer : await receiptOf(raw.hash, sync.timeoutMs, asked.facts, state, parts.stateReads) };
}

async function acknowledge(
  { state, ledger, revalidator }: JudgeParts,
  sub: Submission,
  head: Head,
  dependencies: StateDependencies | undefined,
  source: string,
) {
  let seenAt = head.number;
  try {
    seenAt = (await state.fresh()).number;
    await ledger.acknowledged(sub.sender, sub.nonce, sub.hash, seenAt);
  } catch {
    // The EL unreadable: the reservation keeps the head it was judged at.
  }
  if (dependencies !== undefined) revalidator?.track({ sub, source, dependencies, seenAt });
}

/** Charges the source, as debt, for pool time beyond what it paid up front. */
function settle(meter: Meter, asked: Asked): void {
  asked.tab.owe(Math.ceil(meter.ms / POOL_MS_PER_TOKEN) - meter.paid);
}

export function createJudge(parts: JudgeParts): (raw: RawTransaction, asked: Asked, sync: Sync, source: string) => Promise<Answer> {
  const judging = new Map<string, Promise<Answer>>();
  const judge = async (raw: RawTransaction, asked: Asked, sync: Sync, source: string): Promise<Answer> => {
    const meter: Meter = {
      source,
      gone: () => asked.facts.get(CLOSED) === true,
      spent: (ms) => {
        meter.ms += ms;
      },
      ms: 0,
      paid: 1,
    };
    let decided: Outcome;
    try {
      decided = await decide(parts, raw, asked, sync, meter);
    } finally {
      settle(meter, asked);
    }
    const concluded = 'admitted' in decided ? await admit(parts, raw, asked, sync, decided.admitted, source) : decided;
    return conclude(parts, raw.hash, concluded);
  };

  const judgeOnce = (raw: RawTransaction, asked: Asked, sync: Sync, source: string): Promise<Answer> => {
    // The two variants answer differently: each is judged once on its own.
    const key = sync === undefined ? raw.hash : `sync:${raw.hash}`;
    const running = judging.get(key);
    if (running !== undefined) {
      // The same bytes from a client that is still there are judged afresh if the first one left.
      return running.then((first) =>
        first === ABANDONED ? judgeOnce(raw, asked, sync, source) : 'result' in first ? { error: errors.alreadyKnown() } : first,
      );
    }
    const verdict = judge(raw, asked, sync, source).finally(() => judging.delete(key));
    judging.set(key, verdict);
    return verdict;
  };

  return (raw, asked, sync, source) => {
    if (judging.has(raw.hash)) return judgeOnce(raw, asked, sync, source);
    return replay(parts, raw.hash).then((earlier) =>
      earlier === undefined ? judgeOnce(raw, asked, sync, source) : conclude(parts, raw.hash, earlier),
    );
  };
}
