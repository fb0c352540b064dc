import { expect } from 'chai';
import { rpc } from '../../support/http.js';
import { startTestIngress, testConfig } from '../helpers/ingress.js';
import { useTappedIngress } from '../helpers/tap.js';

const refusal = (id: unknown, message: string) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message } });
const NOT_FOUND = 'the method does not exist/is not available';
const NO_KEYS = 'the method is not supported: this endpoint holds no keys; sign in the client and use eth_sendRawTransaction';

describe('allowlist', () => {
  const suite = useTappedIngress();

  for (const method of ['eth_chainId', 'eth_blockNumber', 'net_version', 'svc_historyStatus']) {
    it(`passes ${method} to the EL`, async () => {
      await rpc(suite.ingress.url, method);
      expect(suite.tap.methods()).to.deep.equal([method]);
    });
  }

  for (const method of ['eth_sendTransaction', 'eth_sign', 'eth_signTransaction', 'eth_signTypedData', 'eth_signTypedData_v4']) {
    it(`refuses ${method} with -32601: the endpoint holds no keys`, async () => {
      const reply = await rpc(suite.ingress.url, method, [], 9);
      expect(reply.status).to.equal(200);
      expect(reply.text).to.equal(refusal(9, NO_KEYS));
      expect(suite.tap.bodies).to.deep.equal([]);
    });
  }

  it("answers eth_accounts with [] itself: the endpoint holds no keys, and the EL's are not shown", async () => {
    const reply = await rpc(suite.ingress.url, 'eth_accounts', [], 4);
    expect(reply.text).to.equal('{"jsonrpc":"2.0","id":4,"result":[]}');
    expect(suite.tap.bodies).to.deep.equal([]);
  });

  it('answers web3_clientVersion with "svc-ingress" itself: the EL\'s name and version stay private', async () => {
    const reply = await rpc(suite.ingress.url, 'web3_clientVersion', [], 6);
    expect(reply.text).to.equal('{"jsonrpc":"2.0","id":6,"result":"svc-ingress"}');
    expect(suite.tap.bodies).to.deep.equal([]);
  });

  it('answers web3_clientVersion with client_version, or lets the EL answer with pass_client_version: true', async () => {
    const named = await startTestIngress(testConfig(suite.tap.url, '\n  - allowlist:\n      client_version: rpc.example.org'));
    const passing = await startTestIngress(testConfig(suite.tap.url, '\n  - allowlist:\n      pass_client_version: true'));
    try {
      expect((await rpc(named.url, 'web3_clientVersion', [], 1)).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"rpc.example.org"}');
      expect(suite.tap.bodies).to.deep.equal([]);
      const passed = await rpc(passing.url, 'web3_clientVersion', [], 2);
      expect(JSON.parse(passed.text).result).to.match(/^anvil\//);
      expect(suite.tap.methods()).to.deep.equal(['web3_clientVersion']);
    } finally {
      await Promise.all([named.shutdown(), passing.shutdown()]);
    }
  });

  for (const method of ['eth_subscribe', 'eth_unsubscribe']) {
    it(`refuses ${method} with -32601, pointing to polling`, async () => {
      const reply = await rpc(suite.ingress.url, method, ['newHeads'], 5);
      expect(reply.text).to.equal(
        refusal(
          5,
          'subscriptions are not supported yet: poll with eth_newFilter or eth_newBlockFilter and eth_getFilterChanges, or with eth_getLogs',
        ),
      );
      expect(suite.tap.bodies).to.deep.equal([]);
    });
  }

  it('refuses svc_validateTransaction with -32601 saying the ingress does not support it', async () => {
    const reply = await rpc(suite.ingress.url, 'svc_validateTransaction', ['0x00'], 3);
    expect(reply.text).to.equal(refusal(3, 'the method svc_validateTransaction is not supported by the ingress'));
    expect(suite.tap.bodies).to.deep.equal([]);
  });

  for (const method of [
    'debug_traceTransaction',
    'admin_peers',
    'txpool_content',
    'engine_newPayloadV3',
    'personal_unlockAccount',
    'miner_start',
    'anvil_setBalance',
    'evm_mine',
    'eth_chainid',
    'ETH_CHAINID',
    'constructor',
    '__proto__',
    'hasOwnProperty',
    'toString',
    'valueOf',
  ]) {
    it(`refuses ${method} with -32601 method not found, never reaching the EL`, async () => {
      const reply = await rpc(suite.ingress.url, method, [], 'id-1');
      expect(reply.text).to.equal(refusal('id-1', NOT_FOUND));
      expect(suite.tap.bodies).to.deep.equal([]);
    });
  }

  it('passes the node-local methods on, but svc_nodeHealth only with the operator fact (allowlist alone)', async () => {
    const alone = await startTestIngress(testConfig(suite.tap.url, '\n  - allowlist'));
    try {
      await rpc(alone.url, 'svc_dropStats', [], 1);
      expect(suite.tap.methods()).to.deep.equal(['svc_dropStats']);
      expect((await rpc(alone.url, 'svc_nodeHealth', [], 2)).text).to.equal(refusal(2, NOT_FOUND));
      expect(suite.tap.methods()).to.deep.equal(['svc_dropStats']);
    } finally {
      await alone.shutdown();
    }
  });

  it('passes extra_methods configured in YAML', async () => {
    const extended = await startTestIngress(testConfig(suite.tap.url, '\n  - allowlist:\n      extra_methods: [ots_getApiLevel]'));
    try {
      const reply = await rpc(extended.url, 'ots_getApiLevel');
      expect(JSON.parse(reply.text)).to.have.property('result');
      expect(suite.tap.methods()).to.deep.equal(['ots_getApiLevel']);
    } finally {
      await extended.shutdown();
    }
  });
});
