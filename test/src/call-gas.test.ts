import { expect } from 'chai';
import {
  callsOf,
  callTarget,
  DEFAULT_RPC_GAS_CAP,
  runsOf,
  GAS_HEAVY_METHODS,
  gasOf,
  namesGasOtherwise,
  requestGas,
} from '../../src/call-gas.js';

const simulation = (...blocks: unknown[]) => [{ blockStateCalls: blocks }, 'latest'];

describe('call-gas', () => {
  it("names the methods that run EVM code at the caller's gas: four of the EL's, the frame transactions' estimate", () => {
    expect([...GAS_HEAVY_METHODS]).to.deep.equal([
      'eth_call',
      'eth_estimateGas',
      'eth_createAccessList',
      'eth_simulateV1',
      'svc_estimateFrameGas',
    ]);
    expect(DEFAULT_RPC_GAS_CAP).to.equal(50_000_000n);
  });

  describe('gasOf', () => {
    it('reads the gas of a call object under any spelling of the key, the largest if several', () => {
      expect(gasOf({ gas: '0x5208' })).to.equal(21_000n);
      expect(gasOf({ GAS: '0x10', Gas: '0x20' })).to.equal(32n);
      expect(gasOf({ 'ga\u017f': '0x2faf080' })).to.equal(50_000_000n);
    });

    it('is undefined for a call naming no gas, or none that is a quantity, and for what is not a call object', () => {
      for (const call of [{}, { gas: 5 }, { gas: '0x' }, { gas: 'ten' }, { gasPrice: '0x1' }, null, [], '0x1', undefined]) {
        expect(gasOf(call), JSON.stringify(call)).to.equal(undefined);
      }
    });
  });

  describe('namesGasOtherwise', () => {
    it('is true for gas named as a number, a decimal string or anything but a hex quantity, under any spelling', () => {
      for (const call of [{ gas: 10_000_000_000 }, { gas: '10000000000' }, { Gas: '0x' }, { GAS: null }, { gas: '0x1', gAs: 7 }]) {
        expect(namesGasOtherwise(call), JSON.stringify(call)).to.equal(true);
      }
    });

    it('is false for hex gas, no gas, and what is not a call object', () => {
      for (const call of [{ gas: '0x5208' }, {}, { gasPrice: 5 }, null, [], '0x1', undefined]) {
        expect(namesGasOtherwise(call), JSON.stringify(call)).to.equal(false);
      }
    });
  });

  describe('callsOf', () => {
    it('takes the first param of eth_call and its kin, and every call of every eth_simulateV1 block', () => {
      expect(callsOf('eth_call', [{ to: '0x1' }, 'latest'])).to.deep.equal([{ to: '0x1' }]);
      expect(
        callsOf('eth_simulateV1', simulation({ calls: [{ gas: '0x1' }] }, {}, { calls: 'x' }, null, { calls: [{}, {}] })),
      ).to.deep.equal([{ gas: '0x1' }, {}, {}]);
    });

    it('reads blockStateCalls and calls under any spelling geth reads them by, counting every spelling present', () => {
      const call = { to: '0x1', gas: '0x2faf080' };
      expect(callsOf('eth_simulateV1', [{ BlockStateCalls: [{ Calls: [call, call] }] }])).to.deep.equal([call, call]);
      expect(callsOf('eth_simulateV1', [{ BLOCKSTATECALLS: [{ CALLS: [call] }] }])).to.deep.equal([call]);
      // Go's EqualFold: the Kelvin sign is k, the long s is s.
      expect(callsOf('eth_simulateV1', [{ 'bloc\u212aStateCall\u017f': [{ call\u017f: [call] }] }])).to.deep.equal([call]);
      expect(
        callsOf('eth_simulateV1', [{ blockStateCalls: [{ calls: [call] }], BlockStateCalls: [{ calls: [call, call] }] }]),
      ).to.have.length(3);
      expect(callsOf('eth_simulateV1', [{ blockStateCalls: [{ calls: [call], Calls: [call] }] }])).to.have.length(2);
      expect(requestGas('eth_simulateV1', [{ BlockStateCalls: [{ Calls: Array(16).fill(call) }] }], 50_000_000n)).to.equal(800_000_000n);
    });

    it('finds no call in params that are not a list, or a simulation without blockStateCalls', () => {
      expect(callsOf('eth_call', { to: '0x1' })).to.deep.equal([]);
      expect(callsOf('eth_simulateV1', [{}])).to.deep.equal([]);
      expect(callsOf('eth_simulateV1', [null])).to.deep.equal([]);
    });
  });

  describe('requestGas', () => {
    it('counts a call naming no gas at the cap', () => {
      expect(requestGas('eth_call', [{ to: '0x1' }], 50_000_000n)).to.equal(50_000_000n);
      expect(requestGas('eth_estimateGas', [], 7n)).to.equal(7n);
    });

    it('sums the calls of a simulation, those naming no gas as one cap between them (geth runs them from one pool of its cap)', () => {
      const params = simulation({ calls: [{ gas: '0x64' }, {}] }, { calls: [{ gas: '0x3e8' }, {}, {}] });
      expect(requestGas('eth_simulateV1', params, 10_000n)).to.equal(11_100n);
      expect(requestGas('eth_simulateV1', simulation({ calls: [{ gas: '0x64' }] }), 10_000n), 'none gasless').to.equal(100n);
    });

    it("counts an estimate naming less gas than a transfer's at the cap, as geth's estimator searches from the block's limit then", () => {
      expect(requestGas('eth_estimateGas', [{ to: '0x1', gas: '0x5207' }], 50_000_000n)).to.equal(50_000_000n);
      expect(requestGas('eth_createAccessList', [{ to: '0x1', gas: '0x0' }], 50_000_000n)).to.equal(50_000_000n);
      expect(requestGas('eth_estimateGas', [{ to: '0x1', gas: '0x5208' }], 50_000_000n)).to.equal(21_000n);
      expect(requestGas('eth_call', [{ to: '0x1', gas: '0x5207' }], 50_000_000n)).to.equal(20_999n);
    });

    it('counts a simulation of no calls as no gas', () => {
      expect(requestGas('eth_simulateV1', simulation(), 10_000n)).to.equal(0n);
    });
  });

  describe('callTarget', () => {
    const TOKEN = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
    const balanceOf = `0x70a08231${'00'.repeat(32)}`;

    it('names a call at the head by method, contract and selector', () => {
      const head = `eth_call ${TOKEN.toLowerCase()} 0x70a08231`;
      expect(callTarget('eth_call', [{ to: TOKEN, data: balanceOf }, 'latest'])).to.equal(head);
      expect(callTarget('eth_call', [{ to: TOKEN.toLowerCase(), input: balanceOf.toUpperCase().replace('0X', '0x') }])).to.equal(head);
      expect(callTarget('eth_call', [{ to: TOKEN, data: balanceOf }, 'pending', null])).to.equal(head);
      expect(callTarget('eth_estimateGas', [{ to: TOKEN, value: '0x1' }])).to.equal(`eth_estimateGas ${TOKEN.toLowerCase()} `);
    });

    it('names none where one name could cover calls of any cost', () => {
      const call = { to: TOKEN, data: balanceOf };
      expect(callTarget('eth_call', [call, '0x10']), 'a past block').to.equal(undefined);
      expect(callTarget('eth_call', [call, 'earliest']), 'the first block').to.equal(undefined);
      expect(callTarget('eth_call', [call, 'latest', { [TOKEN]: { code: '0x00' } }]), 'state overrides').to.equal(undefined);
      expect(callTarget('eth_call', [call, 'latest', null, { number: '0x1' }]), 'block overrides').to.equal(undefined);
      expect(callTarget('eth_call', [{ ...call, authorizationList: [] }]), 'an EIP-7702 delegation').to.equal(undefined);
      expect(callTarget('eth_call', [{ ...call, authorizationLi\u017ft: [] }]), 'one under a long s').to.equal(undefined);
      expect(callTarget('eth_call', [{ to: TOKEN, data: balanceOf, Input: '0x' }]), 'Input beside data').to.equal(undefined);
      expect(callTarget('eth_call', [{ data: balanceOf }]), 'a creation').to.equal(undefined);
      expect(callTarget('eth_call', [{ To: TOKEN, data: balanceOf }]), 'To: an exact reader sees a creation').to.equal(undefined);
      expect(callTarget('eth_call', [{ to: TOKEN, Data: balanceOf }]), 'Data').to.equal(undefined);
      expect(callTarget('eth_call', [{ to: TOKEN, data: balanceOf, input: '0x' }]), 'data twice').to.equal(undefined);
      expect(callTarget('eth_call', [{ to: `0x${'ab'.repeat(250_000)}` }]), 'not an address').to.equal(undefined);
      expect(callTarget('eth_call', [{ to: TOKEN, data: 'junk' }]), 'calldata not hex').to.equal(undefined);
      expect(callTarget('eth_simulateV1', [{ blockStateCalls: [{ calls: [call] }] }])).to.equal(undefined);
      expect(callTarget('eth_call', { to: TOKEN })).to.equal(undefined);
    });

    it('counts the runs an estimate or an access list makes of its call', () => {
      expect([runsOf('eth_call'), runsOf('eth_simulateV1'), runsOf('eth_estimateGas'), runsOf('eth_createAccessList')]).to.deep.equal([
        1n,
        1n,
        16n,
        16n,
      ]);
    });
  });
});
