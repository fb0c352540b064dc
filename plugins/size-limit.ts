/**
 * size-limit: caps what one request may carry (spec 4.3, 8).
 *
 * - A raw transaction over `max_raw_transaction_bytes` (128 KiB) gets -32602 "oversized
 *   transaction", before anything decodes it.
 * - `max_body_bytes` caps the HTTP body at the transport: past it the core answers 413 without
 *   reading further. It must leave room for a maximum-size transaction written as hex.
 *
 * Order: first (with batch-refuse), so nothing upstream of it handles a big payload.
 */
import { errors } from '../src/errors.js';
import { SUBMISSION_ONLY } from '../src/methods.js';
import type { PluginModule, RequestContext, Verdict } from '../src/plugin.js';

interface SizeLimitOptions {
  readonly maxRawTransactionBytes: number;
  readonly maxBodyBytes: number;
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
    options.done();
    return { maxRawTransactionBytes, maxBodyBytes };
  },
  create({ maxRawTransactionBytes, maxBodyBytes }) {
    // A hex string of n bytes is "0x" plus 2n digits.
    const maxHexLength = 2 + 2 * maxRawTransactionBytes;
    return {
      name: 'size-limit',
      maxBodyBytes,
      methods: SUBMISSION_ONLY,
      handle({ request }: RequestContext): Verdict {
        if (request.method !== 'eth_sendRawTransaction' || !Array.isArray(request.params)) return undefined;
        const raw: unknown = request.params[0];
        return typeof raw === 'string' && raw.length > maxHexLength ? { error: errors.oversizedTransaction() } : undefined;
      },
    };
  },
};
