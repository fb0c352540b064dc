import { expect } from 'chai';
import { PROOF_KEYS_PER_TOKEN, proofCost } from '../../../plugins/rate-limit/proof-cost.js';
import type { RpcRequest } from '../../../src/jsonrpc.js';

const proof = (params?: RpcRequest['params']): RpcRequest => ({ jsonrpc: '2.0', id: 1, method: 'eth_getProof', params });
const keys = (n: number) => Array.from({ length: n }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);

describe('rate-limit: eth_getProof priced by its storage keys', () => {
  it('costs its method cost, and one token more per four keys started', () => {
    expect(PROOF_KEYS_PER_TOKEN).to.equal(4);
    expect(proofCost(proof(['0x1', [], 'latest']), 5, 600)).to.equal(5);
    expect(proofCost(proof(['0x1', keys(1), 'latest']), 5, 600)).to.equal(6);
    expect(proofCost(proof(['0x1', keys(4), 'latest']), 5, 600)).to.equal(6);
    expect(proofCost(proof(['0x1', keys(5), 'latest']), 5, 600)).to.equal(7);
  });

  it('never costs more than the burst: 7,000 keys are a whole bucket', () => {
    expect(proofCost(proof(['0x1', keys(7_000), 'latest']), 5, 600)).to.equal(600);
  });

  it('counts no keys where params hold none the EL would read', () => {
    expect(proofCost(proof(), 5, 600)).to.equal(5);
    expect(proofCost(proof(['0x1', '0x2']), 5, 600)).to.equal(5);
    expect(proofCost(proof({ address: '0x1' }), 5, 600)).to.equal(5);
  });
});
