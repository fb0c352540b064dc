/**
 * batch-refuse: a JSON array body is refused without reaching the EL (spec 4, one request per
 * HTTP call). Each element gets its own -32600 carrying that element's id, so a batching client
 * can match every refusal to its call; the message says what to do instead. A batch of more
 * than `MAX_ANSWERED_ELEMENTS` gets the single id-less refusal instead: no client batches that
 * many, and answering each would let a 500 KB body of empty arrays buy a 17 MB answer.
 *
 * Hook: handleBatch only. Order: first, before anything spends work on the body.
 * Without this plugin the core still refuses arrays, with a single id-less error.
 */
import { errors, idOf, type PluginModule } from '../src/plugin.js';

const MAX_ANSWERED_ELEMENTS = 1_000;

export const batchRefuse: PluginModule<void> = {
  name: 'batch-refuse',
  parseOptions(options) {
    options.done();
  },
  create() {
    const answer = { error: errors.batchRefused() };
    return {
      name: 'batch-refuse',
      handleBatch: (elements) =>
        elements.length > MAX_ANSWERED_ELEMENTS ? undefined : elements.map((element) => ({ id: idOf(element), answer })),
    };
  },
};
