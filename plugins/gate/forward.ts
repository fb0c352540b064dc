import { errors, RpcFailure, type Answer, type Upstream } from '../../src/plugin.js';
import type { RawTransaction } from './shape.js';

/**
 * Hands an admitted transaction to the submission target. The answer is the ingress's own
 * keccak-256 of the raw bytes (spec 1.6), not whatever hash the target echoes; a refusal from
 * the target passes through with its reason. An unreachable target fails closed: the client is
 * told the transaction was not forwarded (-32603) and may retry.
 */
export async function forwardSubmission(submit: Upstream, { hex, hash }: RawTransaction, headers?: Readonly<Record<string, string>>): Promise<Answer> {
  let answer: Answer;
  try {
    answer = await submit.call('eth_sendRawTransaction', [hex], headers);
  } catch (err) {
    if (err instanceof RpcFailure) throw new RpcFailure(errors.submissionUnavailable(), { cause: err });
    throw err;
  }
  return 'error' in answer ? answer : { result: hash };
}
