/** The raw bytes of a submission: read from the params, and forwarded once admitted. */
import { errors, RpcFailure, type Answer, type Upstream } from '../../../src/plugin.js';
import { bytesOfHex, keccakHex } from '../../../protocol/index.js';

/** A raw transaction as every stage of the gate takes it: read, hex-decoded and hashed once. */
export interface RawTransaction {
  /** As the client sent it: 0x hex. */
  readonly hex: string;
  readonly bytes: Uint8Array;
  /** keccak-256 of `bytes`: the transaction hash the gate answers (spec 1.6). */
  readonly hash: string;
}

const RAW_HEX = /^0x(?:[0-9a-fA-F]{2})+$/;

/**
 * The raw transaction of an `eth_sendRawTransaction` call: params must be exactly one non-empty,
 * even-length `0x` hex string (its size was already capped by size-limit).
 */
export function readRawTransaction(params: unknown): RawTransaction {
  if (!Array.isArray(params) || params.length !== 1) {
    throw new RpcFailure(errors.invalidParams('expected one parameter, the raw transaction as 0x-prefixed hex'));
  }
  const raw: unknown = params[0];
  if (typeof raw !== 'string' || !RAW_HEX.test(raw)) {
    throw new RpcFailure(errors.invalidParams('the raw transaction must be non-empty 0x-prefixed hex of whole bytes'));
  }
  const bytes = bytesOfHex(raw);
  return { hex: raw, bytes, hash: keccakHex(bytes) };
}

/**
 * Hands an admitted transaction to the submission target. The answer is the ingress's own
 * keccak-256 of the raw bytes (spec 1.6), not whatever hash the target echoes; a refusal from
 * the target passes through with its reason. An unreachable target fails closed: the client is
 * told the transaction was not forwarded (-32603) and may retry.
 */
export async function forwardSubmission(
  submit: Upstream,
  { hex, hash }: RawTransaction,
  headers?: Readonly<Record<string, string>>,
): Promise<Answer> {
  let answer: Answer;
  try {
    answer = await submit.call('eth_sendRawTransaction', [hex], headers);
  } catch (err) {
    if (err instanceof RpcFailure) throw new RpcFailure(errors.submissionUnavailable(), { cause: err });
    throw err;
  }
  return 'error' in answer ? answer : { result: hash };
}
