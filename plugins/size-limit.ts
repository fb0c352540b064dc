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
 *
 * Order: first (with batch-refuse), so nothing upstream of it handles a big payload.
 */
import { errors, SUBMISSION_ONLY, type PluginModule, type RequestContext, type Verdict } from '../src/plugin.js';

interface SizeLimitOptions {
  readonly maxRawTransactionBytes: number;
  readonly maxBodyBytes: number;
  readonly rpcGasCap: bigint;
}

/** The methods that run EVM code with a caller-chosen gas, and where their gas sits. */
const CALL_METHODS = ['eth_call', 'eth_estimateGas', 'eth_createAccessList'] as const;
const SIMULATE = 'eth_simulateV1';
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;

/**
 * The most gas a call object asks for, under any spelling of the key: geth matches JSON keys
 * case-insensitively, so `Gas` is gas there.
 */
function gasOf(call: unknown): bigint | undefined {
  if (call === null || typeof call !== 'object' || Array.isArray(call)) return undefined;
  let most: bigint | undefined;
  for (const [key, gas] of Object.entries(call)) {
    if (key.length !== 3 || key.toLowerCase() !== 'gas' || typeof gas !== 'string' || !QUANTITY.test(gas)) continue;
    const asked = BigInt(gas);
    if (most === undefined || asked > most) most = asked;
  }
  return most;
}

/** Every call object of a request: the first param, or each call of each eth_simulateV1 block. */
function callsOf(method: string, params: unknown): unknown[] {
  if (!Array.isArray(params)) return [];
  if (method !== SIMULATE) return [params[0]];
  const blocks = (params[0] as { blockStateCalls?: unknown } | null)?.blockStateCalls;
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((block) => {
    const calls = (block as { calls?: unknown } | null)?.calls;
    return Array.isArray(calls) ? calls : [];
  });
}

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
    const rpcGasCap = BigInt(options.integer('rpc_gas_cap', 50_000_000, { min: 21_000 }));
    options.done();
    return { maxRawTransactionBytes, maxBodyBytes, rpcGasCap };
  },
  create({ maxRawTransactionBytes, maxBodyBytes, rpcGasCap }) {
    // A hex string of n bytes is "0x" plus 2n digits.
    const maxHexLength = 2 + 2 * maxRawTransactionBytes;
    const oversized = { error: errors.oversizedTransaction(maxRawTransactionBytes) };
    return {
      name: 'size-limit',
      maxBodyBytes,
      methods: new Set([...SUBMISSION_ONLY, ...CALL_METHODS, SIMULATE]),
      handle({ request }: RequestContext): Verdict {
        if (SUBMISSION_ONLY.has(request.method)) {
          const raw: unknown = Array.isArray(request.params) ? request.params[0] : undefined;
          return typeof raw === 'string' && raw.length > maxHexLength ? oversized : undefined;
        }
        for (const call of callsOf(request.method, request.params)) {
          const gas = gasOf(call);
          if (gas !== undefined && gas > rpcGasCap) {
            return { error: errors.invalidParams(`gas ${gas} is above this endpoint's cap of ${rpcGasCap} for a call`) };
          }
        }
        return undefined;
      },
    };
  },
};
