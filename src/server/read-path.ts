/**
 * A read every plugin passed, on its way to an answer: kept (src/cache/), kept by another instance
 * of the fleet (cache.shared), the answer of the same read already at the EL (cache/in-flight.ts),
 * or the EL's, streamed back; a gas-heavy call waits for its turn on one of the lanes kept for
 * them (el-turns.ts), by the EL time each source used.
 */
import { withId } from '../cache/answer-cache.js';
import type { CacheRule } from '../cache/rules.js';
import { callTarget, DEFAULT_RPC_GAS_CAP, GAS_HEAVY_METHODS, requestGas, runsOf } from '../call-gas.js';
import { CALL_GAS, SOURCE } from '../facts.js';
import { canonicalBody } from '../jsonrpc.js';
import type { RequestContext } from '../plugin.js';
import { peerSource } from '../source-connections.js';
import { errors } from '../errors.js';
import { answer, fail, sendKept, type Exchange } from './exchange.js';

/** Kept, shared by the fleet, or asked of the EL. */
export function answerRead(ex: Exchange, ctx: RequestContext): void {
  const { runtime, res, trace } = ex;
  const { request } = ctx;
  // An answer that cannot change, kept: priced by the chain as any read, answered here.
  const rule = runtime.cache?.ruleFor(request);
  const kept = rule === undefined ? undefined : runtime.cache!.answer(rule, request.id, () => sourceOf(ex, ctx));
  if (kept !== undefined) {
    trace.outcome = 'answered';
    return sendKept(ex, kept);
  }
  // Another instance of the fleet may have kept it (cache.shared): asked before the EL.
  if (rule !== undefined && runtime.cache!.shared) {
    return void runtime
      .cache!.sharedAnswer(rule, request.id, () => sourceOf(ex, ctx))
      .then((shared) => {
        if (res.destroyed) return;
        if (shared === undefined) return ask(ex, ctx, rule);
        trace.outcome = 'answered';
        sendKept(ex, shared);
      })
      .catch((err: unknown) => fail(ex, request, err));
  }
  ask(ex, ctx, rule);
}

/**
 * The request's source, as rate-limit names it (else the peer's, and behind a trusted proxy the
 * client it forwards for): asked only when needed.
 */
function sourceOf({ runtime }: Exchange, { facts, peer }: RequestContext): string {
  return facts.get(SOURCE) ?? peerSource(peer.address, runtime.peerSourceOf) ?? runtime.chain.requestSource(peer) ?? peer.address;
}

/** The answer's end, told by the upstream: its bytes counted, or what failed answered. */
function streamed(ex: Exchange, ctx: RequestContext, err: unknown, declaredBytes: number): void {
  if (err !== undefined) return fail(ex, ctx.request, err);
  ex.trace.streamedBytes = declaredBytes;
  ex.metrics.streamedBytes(declaredBytes);
}

/** The rest of a read's way, once no kept answer has come: shared, or asked of the EL. */
function ask(ex: Exchange, ctx: RequestContext, rule: CacheRule | undefined): void {
  const { runtime } = ex;
  const { request } = ctx;
  ex.trace.outcome = 'proxied';
  // The same read already at the EL: its answer, with this request's id (src/cache/in-flight.ts).
  const shared = rule === undefined ? runtime.inFlightReads?.keyOf(request) : undefined;
  if (shared !== undefined && runtime.inFlightReads!.follow(shared, (answer) => followed(ex, ctx, answer))) return;
  const settle = shared === undefined ? undefined : runtime.inFlightReads!.lead(shared);
  const keep =
    rule === undefined && settle === undefined
      ? undefined
      : (bytes: Buffer | undefined) => {
          if (rule !== undefined && bytes !== undefined) runtime.cache!.offer(rule, bytes, sourceOf(ex, ctx));
          settle?.(bytes);
        };
  if (GAS_HEAVY_METHODS.has(request.method)) return takeTurn(ex, ctx, keep);
  ex.trace.cancelUpstream = runtime.execution.stream(
    canonicalBody(request),
    ex.res,
    (err, declaredBytes) => {
      // An answer not kept (too large, failed, cut): the followers ask for themselves.
      settle?.(undefined);
      streamed(ex, ctx, err, declaredBytes);
    },
    runtime.config.clientTimeouts.readStallMs,
    runtime.readAnswered,
    false,
    keep,
  );
}

/** A read that followed the same read at the EL: its answer with this request's id, or asked itself. */
function followed(ex: Exchange, ctx: RequestContext, answer: Buffer | undefined): void {
  const { runtime, res } = ex;
  if (res.destroyed) return;
  const mine = answer === undefined ? undefined : withId(answer, ctx.request.id);
  if (mine !== undefined) return sendKept(ex, mine);
  ex.trace.cancelUpstream = runtime.execution.stream(
    canonicalBody(ctx.request),
    res,
    (err, declaredBytes) => streamed(ex, ctx, err, declaredBytes),
    runtime.config.clientTimeouts.readStallMs,
    runtime.readAnswered,
  );
}

/**
 * A gas-heavy call: a turn on one of the two lanes kept for them (never holding the other reads'
 * connections), by the EL time each source used (el-turns.ts); its EL time goes to whoever
 * charges for it; once the EL has the call it outlives its client (the EL computes on), and what
 * the source holds waits for it.
 */
function takeTurn(ex: Exchange, ctx: RequestContext, keep: ((bytes: Buffer | undefined) => void) | undefined): void {
  const { runtime, res, trace } = ex;
  const { request } = ctx;
  trace.elPending = true;
  const elSettled = () => {
    trace.elPending = false;
    const afterEl = trace.afterEl;
    trace.afterEl = undefined;
    afterEl?.();
  };
  const source = sourceOf(ex, ctx);
  const runs = runsOf(request.method);
  runtime.elTurns.take({
    source,
    target: callTarget(request.method, request.params),
    // The gas of every run: an estimate at 2,000,000 gas may run the call a dozen times.
    gas: (ctx.facts.get(CALL_GAS) ?? requestGas(request.method, request.params, DEFAULT_RPC_GAS_CAP)) * runs,
    searches: runs > 1n,
    gone: () => res.destroyed,
    dropped: elSettled,
    refused: ({ expectedMs, mostMs, retryAfterMs }) => {
      elSettled();
      // Those following the same read ask for themselves: they may be other sources.
      keep?.(undefined);
      trace.outcome = 'refused';
      answer(ex, request.id, { error: errors.callTooLong(expectedMs, mostMs, retryAfterMs) });
    },
    start: (lane, ended) => {
      const started = performance.now();
      let elMs: number | undefined;
      trace.cancelUpstream = runtime[lane].stream(
        canonicalBody(request),
        res,
        (err, declaredBytes) => {
          // An answer that never began (the EL failed, or the call was cut) ends the turn here.
          ended(elMs ?? performance.now() - started);
          elSettled();
          streamed(ex, ctx, err, declaredBytes);
        },
        runtime.config.clientTimeouts.readStallMs,
        (ms) => {
          elMs = ms;
          // Time the EL held the call (anvil sealing a block) is not the source's to pay for.
          const own = runtime.elTurns.ownMs(started, ms, source);
          if (own > 0) ctx.tab.elTime(own);
          // The EL has computed the answer: the turn is over, whatever the client's pace of
          // reading it (which holds one of the lane pool's spare connections, not the turn).
          ended(ms);
        },
        true,
        keep,
      );
    },
  });
}
