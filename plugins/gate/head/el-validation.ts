/**
 * An optional second opinion from the EL, after the gate's own judgement has passed: when the
 * operator names a validation method (`validation_method`, off by default; a reth or geth built
 * for this chain offers `svc_validateTransaction`), the gate asks it with the raw transaction.
 *
 * Strict: only an explicit `{ "valid": true }` (or `true`) admits. `{ "valid": false, reason }`
 * or a JSON-RPC error other than -32601 refuses with the EL's reason. Anything else (the
 * method missing, a result of another shape, such as a misspelt method that happens to exist)
 * fails closed as "validation unavailable": it is never read as a yes.
 */
import { METHOD_NOT_FOUND, RpcFailure, type Answer, type Upstream } from '../../../src/plugin.js';
import type { Submission } from '../submission/decode.js';
import { ExecutionLayerRefusal, Unavailable } from '../errors.js';

export type ElValidation = (sub: Submission) => Promise<void>;

export function createElValidation(execution: Upstream, method: string | undefined): ElValidation | undefined {
  if (method === undefined) return undefined;
  return async function validate(sub: Submission): Promise<void> {
    let answer: Answer;
    try {
      answer = await execution.call(method, [sub.raw.hex]);
    } catch (err) {
      if (err instanceof RpcFailure) throw new Unavailable(`${method}: ${err.message}`, { cause: err });
      throw err;
    }
    if ('error' in answer) {
      if (answer.error.code === METHOD_NOT_FOUND) throw new Unavailable(`${method}: the EL does not offer it`);
      throw new ExecutionLayerRefusal(answer.error.message);
    }
    const result = answer.result as { valid?: unknown; reason?: unknown } | boolean | null;
    if (result === true) return;
    if (result !== null && typeof result === 'object') {
      if (result.valid === true) return;
      if (result.valid === false) {
        throw new ExecutionLayerRefusal(typeof result.reason === 'string' ? result.reason : 'invalid transaction');
      }
    }
    throw new Unavailable(`${method}: the answer is neither {valid: true} nor {valid: false}`);
  };
}
