import { expect } from 'chai';
import { JsonRpcProvider, keccak256, parseEther, Wallet } from 'ethers';
import { DEV_KEY, useAnvil } from '../helpers/el.js';
import { call, rpc } from '../helpers/http.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { startTap, type Tap } from '../helpers/tap.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';

describe('gate (shape and forwarding)', () => {
  const anvil = useAnvil();
  let tap: Tap;
  let ingress: TestIngress;
  let wallet: Wallet;

  before(async () => {
    tap = await startTap(anvil.current.url);
    ingress = await startTestIngress(testConfig(tap.url));
    wallet = new Wallet(DEV_KEY, new JsonRpcProvider(anvil.current.url, 8141, { staticNetwork: true }));
  });
  after(async () => {
    wallet.provider?.destroy();
    await ingress.shutdown();
    await tap.close();
  });
  beforeEach(() => {
    tap.bodies.length = 0;
  });

  for (const [label, params, why] of [
    ['no params', [], 'expected one parameter, the raw transaction as 0x-prefixed hex'],
    ['two params', ['0x00', '0x00'], 'expected one parameter, the raw transaction as 0x-prefixed hex'],
    ['an empty transaction', ['0x'], 'the raw transaction must be non-empty 0x-prefixed hex of whole bytes'],
    ['odd-length hex', ['0x012'], 'the raw transaction must be non-empty 0x-prefixed hex of whole bytes'],
    ['non-hex characters', ['0xzz'], 'the raw transaction must be non-empty 0x-prefixed hex of whole bytes'],
    ['a number', [1], 'the raw transaction must be non-empty 0x-prefixed hex of whole bytes'],
  ] as const) {
    it(`refuses ${label} with -32602 without forwarding`, async () => {
      const reply = await rpc(ingress.url, 'eth_sendRawTransaction', [...params], 4);
      expect(reply.text).to.equal(
        JSON.stringify({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: `invalid params: ${why}` } }),
      );
      expect(tap.bodies).to.deep.equal([]);
    });
  }

  it('forwards a signed transfer and answers keccak-256 of its raw bytes; it gets mined', async () => {
    const raw = await wallet.signTransaction(
      await wallet.populateTransaction({ to: RECIPIENT, value: parseEther('0.01'), maxPriorityFeePerGas: 0n }),
    );
    const reply = await rpc(ingress.url, 'eth_sendRawTransaction', [raw], 8);
    expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 8, result: keccak256(raw) }));
    const receipt = await call<{ transactionHash: string; status: string }>(ingress.url, 'eth_getTransactionReceipt', [keccak256(raw)]);
    expect(receipt.transactionHash).to.equal(keccak256(raw));
    expect(receipt.status).to.equal('0x1');
    expect(tap.bodies.filter((b) => b.includes('eth_sendRawTransaction'))).to.deep.equal([
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
    ]);
  });

  it('passes the EL\'s refusal through with its reason', async () => {
    const tx = await wallet.populateTransaction({ to: RECIPIENT, value: 1n, nonce: 0 });
    const raw = await wallet.signTransaction(tx);
    const direct = JSON.parse((await rpc(anvil.current.url, 'eth_sendRawTransaction', [raw], 3)).text);
    expect(direct.error.message).to.match(/nonce/i);
    const reply = JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', [raw], 3)).text);
    expect(reply).to.deep.equal(direct);
  });

  it('answers -32603 and forwards nothing when the submission target is unreachable', async () => {
    const orphan = await startTestIngress(
      testConfig(tap.url).replace(`execution: ${tap.url}`, `execution: ${tap.url}\n  submit: http://127.0.0.1:1`),
    );
    try {
      const raw = await wallet.signTransaction(await wallet.populateTransaction({ to: RECIPIENT, value: 1n }));
      const reply = await rpc(orphan.url, 'eth_sendRawTransaction', [raw], 2);
      expect(reply.text).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"submission unavailable: the transaction was not forwarded; retry later"}}',
      );
      expect(tap.methods()).to.not.include('eth_sendRawTransaction');
    } finally {
      await orphan.shutdown();
    }
  });
});
