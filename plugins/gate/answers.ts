/**
 * The one place what the gate's parts throw (errors.ts) becomes a wire answer, and what the
 * ledger keeps of a refusal to answer it again.
 */
import type { Refusal } from '../../protocol/index.js';
import { errors, type Answer } from '../../src/plugin.js';
import { Abandoned, ExecutionLayerRefusal, PoolBusy, SyncNonceGap, Unavailable } from './errors.js';
import type { CachedRefusal } from './ledger/verdict-cache.js';

/** How long a client should wait when the worker pool is full. */
const POOL_BUSY_RETRY_MS = 1_000;

/**
 * Whether what a judgement threw is a failure that is no verdict on the transaction (the client
 * gone, the pool full, the EL unreadable, EIP-7966's nonce gap): answered, never remembered.
 */
export function isNoVerdict(err: unknown): boolean {
  return err instanceof Abandoned || err instanceof PoolBusy || err instanceof Unavailable || err instanceof SyncNonceGap;
}

/** The answer for a failure that is no verdict, or undefined for anything else (rethrown by the caller). */
export function answerFor(err: unknown): Answer | undefined {
  if (err instanceof PoolBusy) return { error: errors.rateLimited(err.scope, POOL_BUSY_RETRY_MS) };
  if (err instanceof Unavailable) return { error: errors.validationUnavailable() };
  if (err instanceof SyncNonceGap) return { error: errors.syncNonceGap(err.next) };
  return undefined;
}

/** The wire error of a refusal, first given (`cached` false) or replayed. */
export function refusalError(refusal: CachedRefusal, cached: boolean) {
  return refusal.byExecutionLayer
    ? errors.rejectedByExecutionLayer(refusal.detail, cached)
    : errors.rejected(refusal.reason, refusal.detail, cached, refusal.extra);
}

/** What the ledger keeps of a refusal judged at `head`. */
export function cachedRefusalOf(err: Refusal, head: bigint | undefined): CachedRefusal {
  return {
    reason: err.reason,
    detail: err.detail,
    extra: err.extra,
    byExecutionLayer: err instanceof ExecutionLayerRefusal,
    head,
    ...(err.dependencies === undefined ? {} : { dependencies: err.dependencies }),
  };
}
