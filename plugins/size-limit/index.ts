/**
 * size-limit: caps what one request may carry (spec 4.3, 8).
 *
 * - A raw transaction over `max_raw_transaction_bytes` (128 KiB) gets -32602 "oversized
 *   transaction", before anything decodes it.
 * - `max_body_bytes` caps the HTTP body at the transport: past it the core answers 413 without
 *   reading further. It must leave room for a maximum-size transaction written as hex.
 * - `rpc_gas_cap` (50,000,000, geth's and reth's default): a call that asks for more gas
 *   (`eth_call`, `eth_estimateGas`, `eth_createAccessList`, each call of `eth_simulateV1`) gets
 *   -32602; an EL keeps computing long after the ingress gave up on an answer. A call that names
 *   no gas gets the EL's own cap, which must be no higher.
 * - a call whose gas is not a hex quantity (a JSON number, a decimal string) gets -32602: geth
 *   refuses it too, and anvil would run it at the gas it names, past every cap and price here.
 * - `max_simulate_gas` (default: 4 × `rpc_gas_cap`): the most gas the calls of one `eth_simulateV1`
 *   may ask for in all; -32602 above it. Without it, 16 calls at the cap are 16 eth_calls' work
 *   for one request. The calls naming no gas count as one `rpc_gas_cap` between them, as geth's
 *   simulation runs them from one pool of its cap and reth refuses a simulation past its cap
 *   (`simulate_gasless_calls: shared_cap`, the default); an EL that gives each its own gas
 *   (anvil: the block's 60,000,000 each) is run with `each_at_cap`, each counted at the cap,
 *   or one request of a thousand such calls would hold it for minutes.
 *
 * - `max_logs_block_range` (10,000; 0: none): an `eth_getLogs` or `eth_newFilter` spanning more
 *   blocks gets -32000 "exceed maximum block range: N", the text geth-run public endpoints answer
 *   and range-splitting clients read (log-range.ts).
 *
 * Every call-type read that passes records CALL_GAS (its calls' gas, summed) for rate-limit.
 *
 * Order: first (with batch-refuse), so nothing upstream of it handles a big payload.
 */
import {
  CALL_GAS,
  callsOf,
  errors,
  GAS_HEAVY_METHODS,
  gasOf,
  namesGasOtherwise,
  requestGas,
  RpcFailure,
  sharedFor,
  SUBMISSION_ONLY,
  type PluginModule,
  type RequestContext,
  type Verdict,
} from '../../src/plugin.js';
import { blockSpanOf, LOG_RANGE_METHODS } from './log-range.js';

interface SizeLimitOptions {
  readonly maxRawTransactionBytes: number;
  readonly maxBodyBytes: number;
  readonly rpcGasCap: bigint;
  readonly maxSimulateGas: bigint;
  /** How the EL gives gas to an eth_simulateV1's calls naming none: from one pool of its cap, or each its own. */
  readonly simulateGasless: 'shared_cap' | 'each_at_cap';
  /** The most blocks one eth_getLogs or eth_newFilter may span; 0: any. */
  readonly maxLogsBlockRange: number;
}

/** How long one read of the head serves every range that needs it. */
const HEAD_CACHE_MS = 1_000;

/** max_simulate_gas by default: this many calls at rpc_gas_cap. */
const SIMULATE_CALLS_AT_CAP = 4;
/** Spec 4.3 and 8: maximum raw transaction size. */
const MAX_RAW_TRANSACTION_BYTES = 128 * 1024;
/** Room for the JSON-RPC envelope around a transaction's hex (its "0x", quotes, id, spacing). */
const ENVELOPE_ALLOWANCE_BYTES = 4 * 1024;

export const sizeLimit: PluginModule<SizeLimitOptions> = {
  name: 'size-limit',
  parseOptions(options) {
    const maxRawTransactionBytes = options.integer('max_raw_transaction_bytes', MAX_RAW_TRANSACTION_BYTES);
    const smallestBody = 2 * maxRawTransactionBytes + 2 + ENVELOPE_ALLOWANCE_BYTES;
    const maxBodyBytes = options.integer('max_body_bytes', 512 * 1024);
    if (maxBodyBytes < smallestBody) {
      options.fail('max_body_bytes', `must be at least ${smallestBody} to carry a maximum-size transaction as hex`);
    }
    const rpcGasCap = options.integer('rpc_gas_cap', 50_000_000, { min: 21_000 });
    // A one-call simulation at the cap must pass, as the same eth_call does; by default four
    // calls at the cap do, and any number naming no gas (one cap between them).
    const maxSimulateGas = options.integer('max_simulate_gas', SIMULATE_CALLS_AT_CAP * rpcGasCap, { min: rpcGasCap });
    const simulateGasless = options.string('simulate_gasless_calls', 'shared_cap');
    if (simulateGasless !== 'shared_cap' && simulateGasless !== 'each_at_cap') {
      return options.fail('simulate_gasless_calls', 'must be shared_cap (geth, reth) or each_at_cap (anvil)');
    }
    const maxLogsBlockRange = options.integer('max_logs_block_range', 10_000, { min: 0 });
    options.done();
    return {
      maxRawTransactionBytes,
      maxBodyBytes,
      rpcGasCap: BigInt(rpcGasCap),
      maxSimulateGas: BigInt(maxSimulateGas),
      simulateGasless,
      maxLogsBlockRange,
    };
  },
  create({ maxRawTransactionBytes, maxBodyBytes, rpcGasCap, maxSimulateGas, simulateGasless, maxLogsBlockRange }, { stateReads }) {
    const head = sharedFor(HEAD_CACHE_MS, async () => {
      const answer = await stateReads.call('eth_blockNumber', []);
      if (!('result' in answer) || typeof answer.result !== 'string') throw new RpcFailure(errors.upstreamInvalid());
      return BigInt(answer.result);
    });
    const tooWide = { error: errors.blockRangeTooWide(maxLogsBlockRange) };
    const logRange = (params: unknown): Verdict | Promise<Verdict> => {
      const span = blockSpanOf(params, head);
      if (!(span instanceof Promise)) return span !== undefined && span > BigInt(maxLogsBlockRange) ? tooWide : undefined;
      return span.then((blocks) => (blocks !== undefined && blocks > BigInt(maxLogsBlockRange) ? tooWide : undefined));
    };
    const gaslessShareCap = simulateGasless === 'shared_cap';
    const gaslessNote = gaslessShareCap
      ? `the calls naming no gas count as ${rpcGasCap} between them`
      : `a call naming no gas counts as ${rpcGasCap}: name the gas of each call`;
    // A hex string of n bytes is "0x" plus 2n digits.
    const maxHexLength = 2 + 2 * maxRawTransactionBytes;
    const oversized = { error: errors.oversizedTransaction(maxRawTransactionBytes) };
    return {
      name: 'size-limit',
      maxBodyBytes,
      methods: new Set([...SUBMISSION_ONLY, ...GAS_HEAVY_METHODS, ...(maxLogsBlockRange > 0 ? LOG_RANGE_METHODS : [])]),
      handle({ request, facts }: RequestContext): Verdict | Promise<Verdict> {
        if (LOG_RANGE_METHODS.has(request.method)) return logRange(request.params);
        if (SUBMISSION_ONLY.has(request.method)) {
          const raw: unknown = Array.isArray(request.params) ? request.params[0] : undefined;
          return typeof raw === 'string' && raw.length > maxHexLength ? oversized : undefined;
        }
        for (const call of callsOf(request.method, request.params)) {
          if (namesGasOtherwise(call)) return { error: errors.invalidParams('gas must be a hex quantity, such as "0x5208"') };
          const gas = gasOf(call);
          if (gas !== undefined && gas > rpcGasCap) {
            return { error: errors.invalidParams(`gas ${gas} is above this endpoint's cap of ${rpcGasCap} for a call`) };
          }
        }
        const total = requestGas(request.method, request.params, rpcGasCap, gaslessShareCap);
        if (total > maxSimulateGas) {
          return {
            error: errors.invalidParams(
              `the calls of this eth_simulateV1 ask for ${total} gas in all, above this endpoint's cap of ${maxSimulateGas} for one simulation (${gaslessNote})`,
            ),
          };
        }
        facts.set(CALL_GAS, total);
        return undefined;
      },
    };
  },
};
