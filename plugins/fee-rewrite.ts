/**
 * fee-rewrite: fee-blind answers for fee methods (spec 1.9, 4.2). Ordering is FIFO by consensus,
 * so a priority fee buys nothing and wallets must not be led to offer one.
 *
 * - `eth_maxPriorityFeePerGas` answers `0x0` without asking the EL.
 * - `eth_gasPrice` answers the latest block's base fee (`0x0` before London-style fees).
 * - `eth_feeHistory` is asked of the EL and its `reward` percentiles are reported as `0x0`.
 * EL errors pass through as the EL gave them; an unreachable EL is the core's -32603.
 *
 * Order: after allowlist (these are allowlisted reads it answers instead of streaming).
 */
import type { Answer } from '../src/jsonrpc.js';
import type { PluginModule, RequestContext, Verdict } from '../src/plugin.js';
import { sharedFor } from '../src/recent.js';
import type { Upstream } from '../src/upstream.js';

interface FeeRewriteOptions {
  /** How long one base-fee reading answers eth_gasPrice; blocks come about once a second. */
  readonly baseFeeCacheMs: number;
}

const ZERO = '0x0';
const FEE_METHODS: ReadonlySet<string> = new Set(['eth_maxPriorityFeePerGas', 'eth_gasPrice', 'eth_feeHistory']);

export const feeRewrite: PluginModule<FeeRewriteOptions> = {
  name: 'fee-rewrite',
  parseOptions(options) {
    const baseFeeCacheMs = options.integer('base_fee_cache_ms', 250, { min: 0, max: 10_000 });
    options.done();
    return { baseFeeCacheMs };
  },
  create({ baseFeeCacheMs }, { execution }) {
    const gasPrice = sharedFor(baseFeeCacheMs, () => latestBaseFee(execution));
    return {
      name: 'fee-rewrite',
      methods: FEE_METHODS,
      handle({ request }: RequestContext): Verdict | Promise<Verdict> {
        switch (request.method) {
          case 'eth_maxPriorityFeePerGas':
            return { result: ZERO };
          case 'eth_gasPrice':
            return gasPrice();
          case 'eth_feeHistory':
            return feeHistoryWithoutTips(execution, request.params);
          default:
            return undefined;
        }
      },
    };
  },
};

async function latestBaseFee(execution: Upstream): Promise<Answer> {
  const answer = await execution.call('eth_getBlockByNumber', ['latest', false]);
  if (!('result' in answer)) return answer;
  const block = answer.result as { baseFeePerGas?: unknown } | null;
  return { result: typeof block?.baseFeePerGas === 'string' ? block.baseFeePerGas : ZERO };
}

async function feeHistoryWithoutTips(execution: Upstream, params: unknown): Promise<Answer> {
  const answer = await execution.call('eth_feeHistory', Array.isArray(params) ? params : []);
  if (!('result' in answer)) return answer;
  const history = answer.result as { reward?: unknown } | null;
  if (history === null || typeof history !== 'object' || !Array.isArray(history.reward)) return answer;
  const reward = history.reward.map((percentiles: unknown) =>
    Array.isArray(percentiles) ? percentiles.map(() => ZERO) : percentiles,
  );
  return { result: { ...history, reward } };
}
