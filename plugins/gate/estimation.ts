/**
 * Gas estimation for frame transactions, answered by the gate on any EL (issue 35): an EL that
 * does not know type 0x6 would estimate something else (anvil ignores `frames`).
 *
 * - `svc_estimateFrameGas [tx, block]`: `{frames: [{executionGas, stateGas}], gas}`, each frame's
 *   limits (those given kept) and the transaction's max gas with them;
 * - `eth_estimateGas [tx, block]` with a frame transaction (`type: "0x6"` or `frames`): that `gas`.
 *
 * `tx` is ox's `TransactionRequest.Rpc` for type 0x6 (protocol/frame-request.ts); `block` a tag,
 * number or hash (EIP-1898 objects too), `latest` by default, `pending` read as `latest`. The
 * estimate runs in a thread of a lane of its own (pool/simulation/estimate.ts), served by source as
 * the simulations are; its compute time beyond what the request paid is the source's debt.
 */
import { CLOSED, errors, SOURCE, type Answer, type RequestContext } from '../../src/plugin.js';
import { InvalidFrameRequest, isFrameRequest, readFrameRequest, type FrameGasRequest } from '../../protocol/index.js';
import { answerFor } from './answers.js';
import { Abandoned } from './errors.js';
import { POOL_MS_PER_TOKEN } from './judge.js';
import type { EstimateOutcome } from './pool/simulation/estimate.js';
import type { WorkPool } from './pool/work-pool.js';

export const ESTIMATE_FRAME_GAS_METHOD = 'svc_estimateFrameGas';
const ESTIMATE_GAS_METHOD = 'eth_estimateGas';
/** The methods the gate estimates: eth_estimateGas only when it names a frame transaction. */
export const ESTIMATION_METHODS: ReadonlySet<string> = new Set([ESTIMATE_FRAME_GAS_METHOD, ESTIMATE_GAS_METHOD]);

/** Whether the gate estimates this request (any other eth_estimateGas goes on to the EL). */
export function isEstimation(method: string, params: unknown): boolean {
  if (method === ESTIMATE_FRAME_GAS_METHOD) return true;
  return method === ESTIMATE_GAS_METHOD && Array.isArray(params) && isFrameRequest(params[0]);
}

const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const TAGS = new Set(['latest', 'earliest', 'safe', 'finalized']);

/** The block param as the EL reads it, or undefined when it is not one. */
function blockOf(param: unknown): string | undefined {
  if (param === undefined || param === null || param === 'pending') return 'latest';
  if (typeof param === 'string') return TAGS.has(param) || QUANTITY.test(param) || HASH.test(param) ? param : undefined;
  if (typeof param !== 'object' || Array.isArray(param)) return undefined;
  const { blockHash, blockNumber } = param as Record<string, unknown>;
  if (typeof blockHash === 'string' && HASH.test(blockHash) && blockNumber === undefined) return blockHash;
  if (blockHash === undefined) return blockOf(blockNumber ?? undefined);
  return undefined;
}

const hex = (value: bigint) => `0x${value.toString(16)}`;

export function createEstimator(pool: WorkPool, chainId: bigint) {
  return async ({ request, facts, peer, tab }: RequestContext): Promise<Answer> => {
    const params = request.params === undefined || request.params === null ? [] : request.params;
    if (!Array.isArray(params) || params.length < 1 || params.length > 2) {
      return { error: errors.invalidParams(`${request.method} takes [transaction, block] for a frame transaction (no state overrides)`) };
    }
    let read: FrameGasRequest;
    try {
      read = readFrameRequest(params[0], chainId);
    } catch (err) {
      if (err instanceof InvalidFrameRequest) return { error: errors.invalidParams(`frame transaction: ${err.message}`) };
      throw err;
    }
    const block = blockOf(params[1]);
    if (block === undefined) return { error: errors.invalidParams('block must be a tag, a block number or a block hash') };
    let spent = 0;
    let outcome: EstimateOutcome;
    try {
      outcome = await pool.estimate(
        { request: read, block },
        {
          source: facts.get(SOURCE) ?? peer.address,
          gone: () => facts.get(CLOSED) === true,
          spent: (ms) => {
            spent += ms;
          },
        },
      );
    } catch (err) {
      if (err instanceof Abandoned) return { error: errors.internal() };
      const answer = answerFor(err);
      if (answer === undefined) throw err;
      return answer;
    } finally {
      // A read paid its price up front; the thread time past one token's worth is owed.
      tab.owe(Math.ceil(spent / POOL_MS_PER_TOKEN) - 1);
    }
    if ('unknownBlock' in outcome) return { error: errors.headerNotFound() };
    if ('failure' in outcome) {
      const { message, output } = outcome.failure;
      return { error: output === undefined ? errors.frameEstimateFailed(message) : errors.frameReverted(message, output) };
    }
    const { frames, gas } = outcome.estimate;
    if (request.method === ESTIMATE_GAS_METHOD) return { result: hex(gas) };
    return { result: { frames: frames.map((f) => ({ executionGas: hex(f.executionGas), stateGas: hex(f.stateGas) })), gas: hex(gas) } };
  };
}
