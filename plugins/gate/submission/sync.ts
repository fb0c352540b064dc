/** EIP-7966 `eth_sendRawTransactionSync`: its params, its timeout, and the wait for the receipt. */
import { CLOSED, errors, RpcFailure, SYNC_SUBMISSION_METHOD, type Answer, type Facts, type Upstream } from '../../../src/plugin.js';
import { Unavailable } from '../errors.js';
import type { GateOptions } from '../options.js';
import type { HeadState } from '../head/state.js';

/** The params that must be the raw transaction alone: eth_sendRawTransactionSync's second is its timeout. */
export function rawParams(params: unknown, method: string): unknown {
  return method === SYNC_SUBMISSION_METHOD && Array.isArray(params) && params.length === 2 ? params.slice(0, 1) : params;
}

/** The timeout asked for, if it is a positive integer within the maximum; otherwise the default. */
export function syncTimeoutOf(params: unknown, options: GateOptions): number {
  const asked = Array.isArray(params) ? params[1] : undefined;
  return typeof asked === 'number' && Number.isInteger(asked) && asked > 0 && asked <= options.syncTimeoutMaxMs
    ? asked
    : options.syncTimeoutMs;
}

/** How often a waiting eth_sendRawTransactionSync looks for a new head (the head read itself is shared). */
const RECEIPT_WAIT_STEP_MS = 50;

/**
 * The receipt once the EL has it, or error 4 at the timeout. The receipt is asked for once per
 * new head (the head read is the one every submission shares), not polled. The transaction is
 * already forwarded: an EL that cannot be read or answers an error meanwhile ends in error 4
 * with the hash too, never in an answer that reads as "not sent".
 */
export async function receiptOf(hash: string, timeoutMs: number, facts: Facts, state: HeadState, stateReads: Upstream): Promise<Answer> {
  const deadline = Date.now() + timeoutMs;
  let seen = -1n;
  while (Date.now() < deadline && !facts.get(CLOSED)) {
    try {
      const latest = await state.latest();
      if (latest.number !== seen) {
        seen = latest.number;
        const answer = await stateReads.call('eth_getTransactionReceipt', [hash]);
        if ('result' in answer && answer.result !== null) return answer;
      }
    } catch (err) {
      if (!(err instanceof Unavailable || err instanceof RpcFailure)) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(RECEIPT_WAIT_STEP_MS, Math.max(0, deadline - Date.now()))));
  }
  return { error: errors.syncTimeout(hash) };
}
