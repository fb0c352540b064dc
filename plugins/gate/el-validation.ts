/**
 * The EL has the final word (spec 4.4): the gate asks its validation method (default
 * `svc_validateTransaction`), where a frame transaction's VERIFY prefix is simulated under the
 * ERC-7562-style rules. Any JSON-RPC error, or a result `{ valid: false, reason }`, refuses
 * with the EL's reason; any other result admits.
 *
 * An EL without the method (stock anvil, reth, geth answer -32601): standard transactions rest
 * on the gate's own state checks; frame transactions are refused, since nothing else can run
 * their VERIFY code. Whether the method exists is re-learnt every `recheckMs`.
 */
import { METHOD_NOT_FOUND, RpcFailure } from '../../src/errors.js';
import type { Upstream } from '../../src/upstream.js';
import type { Submission } from './decode.js';
import { Refusal, refuse } from './refusal.js';
import { Unavailable } from './state.js';

/** An EL refusal: the reason is the EL's own text. */
export class ExecutionLayerRefusal extends Refusal {
  constructor(readonly elReason: string) {
    super('el-rejected', elReason);
  }
}

export function createElValidation(execution: Upstream, method: string, recheckMs: number) {
  let missingUntil = 0;
  return async function validate(sub: Submission): Promise<void> {
    if (Date.now() < missingUntil) return fallback(sub);
    let answer;
    try {
      answer = await execution.call(method, [sub.raw]);
    } catch (err) {
      if (err instanceof RpcFailure) throw new Unavailable(`${method}: ${err.message}`, { cause: err });
      throw err;
    }
    if ('error' in answer) {
      if (answer.error.code !== METHOD_NOT_FOUND) throw new ExecutionLayerRefusal(answer.error.message);
      missingUntil = Date.now() + recheckMs;
      return fallback(sub);
    }
    const result = answer.result as { valid?: unknown; reason?: unknown } | null;
    if (result !== null && typeof result === 'object' && result.valid === false) {
      throw new ExecutionLayerRefusal(typeof result.reason === 'string' ? result.reason : 'invalid transaction');
    }
  };
}

function fallback(sub: Submission): void {
  if (sub.frame !== undefined) {
    refuse('verify-unavailable', 'the execution layer cannot validate frame transactions (it has no validation method)');
  }
}
