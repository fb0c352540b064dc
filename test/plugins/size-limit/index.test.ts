import { expect } from 'chai';
import { parseConfig } from '../../../src/config/load.js';
import { rpc } from '../../../support/http.js';
import { startTestIngress, testConfig } from '../../helpers/ingress.js';
import { useTappedIngress } from '../../helpers/tap.js';

describe('size-limit', () => {
  const suite = useTappedIngress();

  it('refuses a 128 KiB + 1 byte raw transaction with -32602 "oversized transaction", stating the limit', async () => {
    const reply = await rpc(suite.ingress.url, 'eth_sendRawTransaction', [`0x02${'ab'.repeat(128 * 1024)}`], 5);
    expect(reply.status).to.equal(200);
    expect(reply.text).to.equal(
      '{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"oversized transaction","data":{"max_bytes":131072}}}',
    );
    expect(suite.tap.bodies).to.deep.equal([]);
  });

  it('lets a raw transaction of exactly 128 KiB past the size check, on to the gate', async () => {
    const reply = await rpc(suite.ingress.url, 'eth_sendRawTransaction', [`0x02${'ab'.repeat(128 * 1024 - 1)}`]);
    // Not "oversized": the gate saw it, and refused it as undecodable.
    expect(JSON.parse(reply.text).error).to.deep.equal({
      code: -32000,
      message: 'rejected: the payload is not valid RLP',
      data: { reason: 'rlp-invalid' },
    });
  });

  it('honours a smaller configured transaction limit', async () => {
    const small = await startTestIngress(testConfig(suite.tap.url, '\n  - size-limit:\n      max_raw_transaction_bytes: 100\n  - gate'));
    try {
      const reply = await rpc(small.url, 'eth_sendRawTransaction', [`0x${'00'.repeat(101)}`]);
      expect(JSON.parse(reply.text).error).to.deep.equal({ code: -32602, message: 'oversized transaction', data: { max_bytes: 100 } });
    } finally {
      await small.shutdown();
    }
  });

  it('refuses at start a body cap too small to carry a maximum-size transaction', () => {
    expect(() => parseConfig(testConfig(suite.tap.url, '\n  - size-limit:\n      max_body_bytes: 200000'))).to.throw(
      'plugins[0].size-limit.max_body_bytes: must be at least 266242 to carry a maximum-size transaction as hex',
    );
  });

  describe('rpc_gas_cap (50,000,000 by default)', () => {
    const capped = (id: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        error: {
          code: -32602,
          message:
            "invalid params: gas 115792089237316195423570985008687907853269984665640564039457584007913129639935 is above this endpoint's cap of 50000000 for a call",
        },
      });
    const huge = `0x${'f'.repeat(64)}`;

    for (const method of ['eth_call', 'eth_estimateGas', 'eth_createAccessList']) {
      it(`refuses ${method} asking for more gas, without reaching the EL`, async () => {
        const reply = await rpc(suite.ingress.url, method, [{ to: '0x000000000000000000000000000000000000dEaD', gas: huge }, 'latest'], 3);
        expect(reply.text).to.equal(capped(3));
        expect(suite.tap.bodies).to.deep.equal([]);
      });
    }

    it('refuses an eth_simulateV1 whose any call asks for more gas', async () => {
      const blocks = [{ calls: [{ to: '0x000000000000000000000000000000000000dEaD' }] }, { calls: [{ gas: '0x1' }, { gas: huge }] }];
      const reply = await rpc(suite.ingress.url, 'eth_simulateV1', [{ blockStateCalls: blocks }, 'latest'], 4);
      expect(reply.text).to.equal(capped(4));
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('reads the gas key in any case, as geth does', async () => {
      const reply = await rpc(
        suite.ingress.url,
        'eth_call',
        [{ to: '0x000000000000000000000000000000000000dEaD', GAS: huge }, 'latest'],
        3,
      );
      expect(reply.text).to.equal(capped(3));
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('refuses gas named as a number or a decimal string (anvil would run it past the cap), without reaching the EL', async () => {
      for (const gas of [10_000_000_000, '10000000000']) {
        const reply = await rpc(suite.ingress.url, 'eth_call', [{ to: '0x000000000000000000000000000000000000dEaD', gas }, 'latest'], 5);
        expect(reply.text).to.equal(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 5,
            error: { code: -32602, message: 'invalid params: gas must be a hex quantity, such as "0x5208"' },
          }),
        );
      }
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('passes a call at the cap, and one that names no gas, to the EL', async () => {
      await rpc(suite.ingress.url, 'eth_call', [{ to: '0x000000000000000000000000000000000000dEaD', gas: '0x2faf080' }, 'latest']);
      await rpc(suite.ingress.url, 'eth_estimateGas', [{ to: '0x000000000000000000000000000000000000dEaD' }]);
      expect(suite.tap.methods()).to.deep.equal(['eth_call', 'eth_estimateGas']);
    });
  });

  describe('max_simulate_gas (four calls at rpc_gas_cap by default)', () => {
    const DEAD = '0x000000000000000000000000000000000000dEaD';
    const simulation = (calls: unknown[]) => [{ blockStateCalls: [{ calls }] }, 'latest'];

    it('refuses an eth_simulateV1 whose calls name more gas in all, those naming none counted as one cap between them, without reaching the EL', async () => {
      const capped = { to: DEAD, gas: '0x2faf080' };
      const reply = await rpc(
        suite.ingress.url,
        'eth_simulateV1',
        simulation([capped, capped, capped, { to: DEAD }, { to: DEAD }, { to: DEAD, gas: '0x1' }]),
        6,
      );
      expect(reply.text).to.equal(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 6,
          error: {
            code: -32602,
            message:
              "invalid params: the calls of this eth_simulateV1 ask for 200000001 gas in all, above this endpoint's cap of 200000000 for one simulation (the calls naming no gas count as 50000000 between them)",
          },
        }),
      );
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('reads BlockStateCalls and Calls as geth does: 16 calls at the cap so spelt are refused, without reaching the EL', async () => {
      const calls = Array.from({ length: 16 }, () => ({ to: DEAD, gas: '0x2faf080' }));
      const reply = await rpc(suite.ingress.url, 'eth_simulateV1', [{ BlockStateCalls: [{ Calls: calls }] }, 'latest'], 7);
      expect(JSON.parse(reply.text).error.message).to.equal(
        "invalid params: the calls of this eth_simulateV1 ask for 800000000 gas in all, above this endpoint's cap of 200000000 for one simulation (the calls naming no gas count as 50000000 between them)",
      );
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it("passes an eth_simulateV1 of 34 calls naming no gas to the EL, as geth runs them (one cap between them: viem's simulateCalls)", async () => {
      await rpc(suite.ingress.url, 'eth_simulateV1', simulation(Array.from({ length: 34 }, () => ({ to: DEAD }))));
      expect(suite.tap.methods()).to.deep.equal(['eth_simulateV1']);
    });

    it('passes an eth_simulateV1 of 16 calls sharing the cap to the EL', async () => {
      await rpc(suite.ingress.url, 'eth_simulateV1', simulation(Array.from({ length: 16 }, () => ({ to: DEAD, gas: '0x2faf08' }))));
      expect(suite.tap.methods()).to.deep.equal(['eth_simulateV1']);
    });

    it('with simulate_gasless_calls: each_at_cap (an EL giving each its own gas, anvil), counts each call naming no gas at the cap', async () => {
      const anvilLike = await startTestIngress(testConfig(suite.tap.url, '\n  - size-limit:\n      simulate_gasless_calls: each_at_cap'));
      try {
        const five = simulation(Array.from({ length: 5 }, () => ({ to: DEAD })));
        expect(JSON.parse((await rpc(anvilLike.url, 'eth_simulateV1', five)).text).error.message).to.equal(
          "invalid params: the calls of this eth_simulateV1 ask for 250000000 gas in all, above this endpoint's cap of 200000000 for one simulation (a call naming no gas counts as 50000000: name the gas of each call)",
        );
        await rpc(anvilLike.url, 'eth_simulateV1', simulation(Array.from({ length: 4 }, () => ({ to: DEAD }))));
        expect(suite.tap.methods(), 'four pass').to.deep.equal(['eth_simulateV1']);
      } finally {
        await anvilLike.shutdown();
      }
      expect(() => parseConfig(testConfig(suite.tap.url, '\n  - size-limit:\n      simulate_gasless_calls: pooled'))).to.throw(
        'plugins[0].size-limit.simulate_gasless_calls: must be shared_cap (geth, reth) or each_at_cap (anvil)',
      );
    });

    it('takes a larger sum when configured, and refuses at start one below rpc_gas_cap', async () => {
      const wide = await startTestIngress(testConfig(suite.tap.url, '\n  - size-limit:\n      max_simulate_gas: 300000000'));
      try {
        await rpc(wide.url, 'eth_simulateV1', simulation(Array.from({ length: 6 }, () => ({ to: DEAD, gas: '0x2faf080' }))));
        expect(suite.tap.methods()).to.deep.equal(['eth_simulateV1']);
      } finally {
        await wide.shutdown();
      }
      expect(() => parseConfig(testConfig(suite.tap.url, '\n  - size-limit:\n      max_simulate_gas: 49999999'))).to.throw(
        'plugins[0].size-limit.max_simulate_gas: must be an integer >= 50000000',
      );
    });
  });

  describe('max_logs_block_range (10,000 by default)', () => {
    const TOO_WIDE = '{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"exceed maximum block range: 10000"}}';

    it("refuses an eth_getLogs or eth_newFilter spanning more blocks, in geth's words, without reaching the EL", async () => {
      for (const method of ['eth_getLogs', 'eth_newFilter']) {
        const reply = await rpc(suite.ingress.url, method, [{ fromBlock: '0x0', toBlock: '0x2710' }], 3);
        expect(reply.text, method).to.equal(TOO_WIDE);
      }
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it('passes exactly 10,000 blocks, and a range whose tag the head resolves', async () => {
      await rpc(suite.ingress.url, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2710' }]);
      await rpc(suite.ingress.url, 'eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'latest' }]);
      expect(suite.tap.methods().filter((m) => m === 'eth_getLogs')).to.have.length(2);
    });

    it('takes another cap when configured, and none with 0', async () => {
      const narrow = await startTestIngress(testConfig(suite.tap.url, '\n  - size-limit:\n      max_logs_block_range: 2'));
      const open = await startTestIngress(testConfig(suite.tap.url, '\n  - size-limit:\n      max_logs_block_range: 0'));
      try {
        const wide = [{ fromBlock: '0x0', toBlock: '0x2' }];
        expect(JSON.parse((await rpc(narrow.url, 'eth_getLogs', wide)).text).error).to.deep.equal({
          code: -32000,
          message: 'exceed maximum block range: 2',
        });
        await rpc(open.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0xffffff' }]);
        expect(suite.tap.methods()).to.deep.equal(['eth_getLogs']);
      } finally {
        await Promise.all([narrow.shutdown(), open.shutdown()]);
      }
    });
  });
});
