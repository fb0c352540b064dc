import { expect } from 'chai';
import { call, rpc } from '../../support/http.js';
import { startTestIngress, testConfig } from '../helpers/ingress.js';
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

  it("answers eth_gasPrice with the latest block's base fee", async () => {
    const block = await call<{ baseFeePerGas: string }>(suite.anvil.url, 'eth_getBlockByNumber', ['latest', false]);
    const reply = await rpc(suite.ingress.url, 'eth_gasPrice', [], 12);
    expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 12, result: block.baseFeePerGas }));
  });

  it("reports every eth_feeHistory reward as zero and keeps the rest of the EL's answer", async () => {
    const params = ['0x4', 'latest', [10, 50, 90]];
    const direct = await call<{ reward: string[][]; baseFeePerGas: string[] }>(suite.anvil.url, 'eth_feeHistory', params);
    expect(direct.reward).to.have.length(4);
    const reply = JSON.parse((await rpc(suite.ingress.url, 'eth_feeHistory', params)).text);
    expect(reply.result).to.deep.equal({ ...direct, reward: direct.reward.map((row) => row.map(() => '0x0')) });
  });

  it('refuses more than 100 reward percentiles with -32602, without asking the EL', async () => {
    const percentiles = Array.from({ length: 101 }, (_, i) => i * 0.99);
    const reply = await rpc(suite.ingress.url, 'eth_feeHistory', ['0x400', 'latest', percentiles], 6);
    expect(reply.text).to.equal(
      '{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"invalid params: at most 100 reward percentiles"}}',
    );
    expect(suite.tap.bodies).to.deep.equal([]);
  });

  it('charges eth_feeHistory by the size of its answer: one more token per 1,000 entries', async () => {
    const priced = await startTestIngress(
      testConfig(
        suite.tap.url,
        '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 1, burst: 150}\n  - fee-rewrite',
      ),
    );
    try {
      // 1,024 blocks × (100 percentiles + 1) = 103,424 entries: 104 tokens of the 150.
      const big = await rpc(priced.url, 'eth_feeHistory', ['0x400', 'latest', Array.from({ length: 100 }, (_, i) => i)]);
      expect(JSON.parse(big.text)).to.have.property('result');
      // 4 blocks × 4 = 16 entries: one token.
      const cheap = await rpc(priced.url, 'eth_feeHistory', ['0x4', 'latest', [10, 50, 90]]);
      expect(JSON.parse(cheap.text)).to.have.property('result');
      // The block count in decimal is the same count.
      const again = JSON.parse(
        (await rpc(priced.url, 'eth_feeHistory', ['1024', 'latest', Array.from({ length: 100 }, (_, i) => i)])).text,
      );
      expect(again.error).to.include({ code: -32005 });
    } finally {
      await priced.shutdown();
    }
  });

  it("passes the EL's error for bad eth_feeHistory params through unchanged", async () => {
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
