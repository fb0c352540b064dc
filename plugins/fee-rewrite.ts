/**
 * fee-rewrite: fee-blind answers for fee methods (spec 1.9, 4.2). Ordering is FIFO by consensus,
 * so a priority fee buys nothing and wallets must not be led to offer one.
 *
 * - `eth_maxPriorityFeePerGas` answers `0x0` without asking the EL.
 * - `eth_gasPrice` answers the latest block's base fee (`0x0` before London-style fees).
 * - `eth_feeHistory` is asked of the EL (which validates the params) and its `reward`
 *   percentiles are reported as `0x0`. At most 100 percentiles (-32602 beyond); the source pays
 *   one more rate-limit token per 1,000 entries of the answer (blocks × (percentiles + 1)),
 *   counting up to 1024 blocks (the ELs' own limit): reading and rewriting the answer is work.
 * EL errors pass through as the EL gave them; an unreachable EL is the core's -32603.
 *
 * Order: after allowlist (these are allowlisted reads it answers instead of streaming).
 */
import { errors, sharedFor, type Answer, type PluginModule, type RequestContext, type Upstream, type Verdict } from '../src/plugin.js';

interface FeeRewriteOptions {
  /** How long one base-fee reading answers eth_gasPrice; blocks come about once a second. */
  readonly baseFeeCacheMs: number;
}

const ZERO = '0x0';
/** The most percentiles one eth_feeHistory may ask for, and the most blocks an EL returns (geth, reth). */
const MAX_PERCENTILES = 100;
const MAX_BLOCKS = 1024;
const ENTRIES_PER_TOKEN = 1_000;
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
      handle({ request, tab }: RequestContext): Verdict | Promise<Verdict> {
        switch (request.method) {
          case 'eth_maxPriorityFeePerGas':
            return { result: ZERO };
          case 'eth_gasPrice':
            return gasPrice();
          case 'eth_feeHistory': {
            const params = Array.isArray(request.params) ? request.params : [];
            const percentiles = Array.isArray(params[2]) ? params[2] : [];
            if (percentiles.length > MAX_PERCENTILES) {
              return { error: errors.invalidParams(`at most ${MAX_PERCENTILES} reward percentiles`) };
            }
            const entries = blockCountOf(params[0]) * (percentiles.length + 1);
            const charged = tab.take(Math.ceil(entries / ENTRIES_PER_TOKEN) - 1);
            const answer = (overQuota: Answer | undefined) => overQuota ?? feeHistoryWithoutTips(execution, params);
            return charged instanceof Promise ? charged.then(answer) : answer(charged);
          }
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

/** The blocks an eth_feeHistory asks for, as far as the ingress can read them (the EL checks the rest). */
function blockCountOf(count: unknown): number {
  // Hex or decimal, as geth reads it (HexOrDecimal64).
  const blocks =
    typeof count === 'number'
      ? count
      : typeof count === 'string' && /^(?:0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/.test(count)
        ? Number(count)
        : 1;
  return Math.max(1, Math.min(MAX_BLOCKS, blocks));
}

async function feeHistoryWithoutTips(execution: Upstream, params: readonly unknown[]): Promise<Answer> {
  const answer = await execution.call('eth_feeHistory', params);
  if (!('result' in answer)) return answer;
  const history = answer.result as { reward?: unknown } | null;
  if (history === null || typeof history !== 'object' || !Array.isArray(history.reward)) return answer;
  const reward = history.reward.map((percentiles: unknown) => (Array.isArray(percentiles) ? percentiles.map(() => ZERO) : percentiles));
  return { result: { ...history, reward } };
}
