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
 *   may ask for in all, a call naming no gas counted at `rpc_gas_cap`; -32602 above it. Without
 *   it, 16 calls at the cap are 16 eth_calls' work for one request. (geth bounds the sum by its
 *   gas cap too; anvil and reth per call.)
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
  SUBMISSION_ONLY,
  type PluginModule,
  type RequestContext,
  type Verdict,
} from '../src/plugin.js';

interface SizeLimitOptions {
  readonly maxRawTransactionBytes: number;
  readonly maxBodyBytes: number;
  readonly rpcGasCap: bigint;
  readonly maxSimulateGas: bigint;
}

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
    // calls naming no gas do (wallets' previews of a few calls leave gas out).
    const maxSimulateGas = options.integer('max_simulate_gas', SIMULATE_CALLS_AT_CAP * rpcGasCap, { min: rpcGasCap });
    options.done();
    return { maxRawTransactionBytes, maxBodyBytes, rpcGasCap: BigInt(rpcGasCap), maxSimulateGas: BigInt(maxSimulateGas) };
  },
  create({ maxRawTransactionBytes, maxBodyBytes, rpcGasCap, maxSimulateGas }) {
    // A hex string of n bytes is "0x" plus 2n digits.
    const maxHexLength = 2 + 2 * maxRawTransactionBytes;
    const oversized = { error: errors.oversizedTransaction(maxRawTransactionBytes) };
    return {
      name: 'size-limit',
      maxBodyBytes,
      methods: new Set([...SUBMISSION_ONLY, ...GAS_HEAVY_METHODS]),
      handle({ request, facts }: RequestContext): Verdict {
        if (SUBMISSION_ONLY.has(request.method)) {
          const raw: unknown = Array.isArray(request.params) ? request.params[0] : undefined;
          return typeof raw === 'string' && raw.length > maxHexLength ? oversized : undefined;
        }
        let total = 0n;
        for (const call of callsOf(request.method, request.params)) {
          if (namesGasOtherwise(call)) return { error: errors.invalidParams('gas must be a hex quantity, such as "0x5208"') };
          const gas = gasOf(call);
          if (gas !== undefined && gas > rpcGasCap) {
            return { error: errors.invalidParams(`gas ${gas} is above this endpoint's cap of ${rpcGasCap} for a call`) };
          }
          total += gas ?? rpcGasCap;
        }
        if (total > maxSimulateGas) {
          return {
            error: errors.invalidParams(
              `the calls of this eth_simulateV1 ask for ${total} gas in all, above this endpoint's cap of ${maxSimulateGas} for one simulation (a call naming no gas counts as ${rpcGasCap}: name the gas of each call)`,
            ),
          };
        }
        facts.set(CALL_GAS, total);
        return undefined;
      },
    };
  },
};
