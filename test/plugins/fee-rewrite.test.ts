import { expect } from 'chai';
import { call, rpc } from '../helpers/http.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { useTappedIngress } from '../helpers/tap.js';

describe('fee-rewrite', () => {
  const suite = useTappedIngress();
  before(async () => {
    // A few blocks so that fee history has rows.
    await call(suite.anvil.url, 'anvil_mine', ['0x5']);
  });

  it('answers eth_maxPriorityFeePerGas with 0x0 without asking the EL', async () => {
    const reply = await rpc(suite.ingress.url, 'eth_maxPriorityFeePerGas', [], 11);
    expect(reply.text).to.equal('{"jsonrpc":"2.0","id":11,"result":"0x0"}');
    expect(suite.tap.bodies).to.deep.equal([]);
  });

  it('answers eth_gasPrice with the latest block\'s base fee', async () => {
    const block = await call<{ baseFeePerGas: string }>(suite.anvil.url, 'eth_getBlockByNumber', ['latest', false]);
    const reply = await rpc(suite.ingress.url, 'eth_gasPrice', [], 12);
    expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 12, result: block.baseFeePerGas }));
  });

  it('reports every eth_feeHistory reward as zero and keeps the rest of the EL\'s answer', async () => {
    const params = ['0x4', 'latest', [10, 50, 90]];
    const direct = await call<{ reward: string[][]; baseFeePerGas: string[] }>(suite.anvil.url, 'eth_feeHistory', params);
    expect(direct.reward).to.have.length(4);
    const reply = JSON.parse((await rpc(suite.ingress.url, 'eth_feeHistory', params)).text);
    expect(reply.result).to.deep.equal({ ...direct, reward: direct.reward.map((row) => row.map(() => '0x0')) });
  });

  it('passes the EL\'s error for bad eth_feeHistory params through unchanged', async () => {
    const params = ['0x4', 'not-a-block', []];
    const direct = JSON.parse((await rpc(suite.anvil.url, 'eth_feeHistory', params)).text);
    const reply = JSON.parse((await rpc(suite.ingress.url, 'eth_feeHistory', params)).text);
    expect(direct.error).to.be.an('object');
    expect(reply).to.deep.equal(direct);
  });

  it('answers -32603 for eth_gasPrice when the EL is unreachable', async () => {
    const orphan = await startTestIngress(testConfig('http://127.0.0.1:1'));
    try {
      const reply = await rpc(orphan.url, 'eth_gasPrice', [], 1);
      expect(reply.text).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"upstream unavailable: the execution layer did not answer"}}',
      );
    } finally {
      await orphan.shutdown();
    }
  });
});
