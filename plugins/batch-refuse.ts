/**
 * batch-refuse: a JSON array body is refused without reaching the EL (spec 4, one request per
 * HTTP call). Each element gets its own -32600 carrying that element's id, so a batching client
 * can match every refusal to its call; the message says what to do instead.
 *
 * Hook: handleBatch only. Order: first, before anything spends work on the body.
 * Without this plugin the core still refuses arrays, with a single id-less error.
 */
import { errors } from '../src/errors.js';
import { idOf } from '../src/jsonrpc.js';
import type { PluginModule } from '../src/plugin.js';

export const batchRefuse: PluginModule<void> = {
  name: 'batch-refuse',
  parseOptions(options) {
    options.done();
  },
  create() {
    const answer = { error: errors.batchRefused() };
    return {
      name: 'batch-refuse',
      handleBatch: (elements) => elements.map((element) => ({ id: idOf(element), answer })),
    };
  },
};
