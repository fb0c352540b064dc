/**
 * gate: answers every `eth_sendRawTransaction` (spec 4.3, 4.4). The whole chain's only path
 * to consensus.
 *
 * Today: the params' shape is checked (-32602), then the transaction is forwarded to the
 * submission target and answered with keccak-256 of its raw bytes. Decoding, signature and
 * admission checks join here, each in its own file, before `forwardSubmission`.
 *
 * Order: after size-limit (sizes are capped before any decoding) and after allowlist.
 */
import type { PluginModule, RequestContext, Verdict } from '../../src/plugin.js';
import { forwardSubmission } from './forward.js';
import { readRawTransaction } from './shape.js';

export const gate: PluginModule<void> = {
  name: 'gate',
  parseOptions(options) {
    options.done();
  },
  create(_options, { submit }) {
    return {
      name: 'gate',
      handle({ request }: RequestContext): Verdict | Promise<Verdict> {
        if (request.method !== 'eth_sendRawTransaction') return undefined;
        return forwardSubmission(submit, readRawTransaction(request.params));
      },
    };
  },
};
