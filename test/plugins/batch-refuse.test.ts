import { expect } from 'chai';
import { batchRefuse } from '../../plugins/batch-refuse.js';
import type { PluginEnv } from '../../src/plugin.js';

const BATCH = {
  code: -32600,
  message: 'batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)',
};

describe('batch-refuse', () => {
  // The plugin reads nothing from its environment.
  const plugin = () => batchRefuse.create(undefined, {} as PluginEnv) as { handleBatch: (elements: readonly unknown[]) => unknown };

  it("answers each element with the batch refusal under that element's own id, null where it has none", () => {
    const elements = [{ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { id: 'x' }, 5, null, { id: 1.5 }, { method: 'eth_blockNumber' }];
    expect(plugin().handleBatch(elements)).to.deep.equal([1, 'x', null, null, null, null].map((id) => ({ id, answer: { error: BATCH } })));
  });

  it('answers up to 1,000 elements one by one, and more with one id-less refusal (undefined: the core answers)', () => {
    expect((plugin().handleBatch(Array.from({ length: 1_000 }, (_, id) => ({ id }))) as unknown[]).length).to.equal(1_000);
    expect(plugin().handleBatch(Array.from({ length: 1_001 }, (_, id) => ({ id })))).to.equal(undefined);
  });
});
