import { expect } from 'chai';
import { elTimeCharge, heavyCost } from '../../../plugins/rate-limit/heavy.js';
import { CALL_GAS, Facts } from '../../../src/facts.js';
import type { RpcRequest } from '../../../src/jsonrpc.js';

const request = (method: string, params: readonly unknown[]): RpcRequest => ({ jsonrpc: '2.0', id: 1, method, params });
const call = (gas?: number) =>
  request('eth_call', [gas === undefined ? { to: '0x1' } : { to: '0x1', gas: `0x${gas.toString(16)}` }, 'latest']);

describe('rate-limit: heavy reads', () => {
  it('costs one token per gas_per_token of the gas asked, rounded up', () => {
    expect(heavyCost(call(21_000), new Facts(), 10_000_000n, 1, 600)).to.equal(1);
    expect(heavyCost(call(10_000_001), new Facts(), 10_000_000n, 1, 600)).to.equal(2);
    expect(heavyCost(call(50_000_000), new Facts(), 10_000_000n, 1, 600)).to.equal(5);
  });

  it("prices a call naming no gas at the EL's default cap without size-limit, and at size-limit's CALL_GAS with it", () => {
    expect(heavyCost(call(), new Facts(), 10_000_000n, 1, 600)).to.equal(5);
    const facts = new Facts();
    facts.set(CALL_GAS, 30_000_000n);
    expect(heavyCost(call(), facts, 10_000_000n, 1, 600)).to.equal(3);
  });

  it('sums the calls of an eth_simulateV1', () => {
    const calls = Array.from({ length: 16 }, () => ({ gas: '0x2faf08' }));
    expect(heavyCost(request('eth_simulateV1', [{ blockStateCalls: [{ calls }] }]), new Facts(), 1_000_000n, 1, 600)).to.equal(50);
  });

  it('charges the EL time an answer took beyond what the read paid, one token per el_ms_per_token started', () => {
    const charged: number[] = [];
    const report = elTimeCharge(5, 3, (tokens) => charged.push(tokens));
    report(15);
    report(15.1);
    report(340);
    report(0.4);
    expect(charged).to.deep.equal([1, 65]);
  });

  it('costs at least the method cost, and never more than the burst (a larger charge could never pass)', () => {
    expect(heavyCost(call(21_000), new Facts(), 10_000_000n, 5, 600)).to.equal(5);
    expect(heavyCost(call(50_000_000), new Facts(), 1n, 1, 600)).to.equal(600);
  });
});
