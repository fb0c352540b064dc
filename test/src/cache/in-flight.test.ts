import { expect } from 'chai';
import { InFlightReads } from '../../../src/cache/in-flight.js';
import type { RpcRequest } from '../../../src/jsonrpc.js';

const request = (method: string, params: unknown[] = []): RpcRequest => ({ jsonrpc: '2.0', id: 1, method, params });

describe('in-flight reads: identical reads at once share one answer (cache/in-flight.ts)', () => {
  it("shares reads whose answer is everyone's, never filters, submissions or calls", () => {
    const reads = new InFlightReads();
    expect(reads.keyOf(request('eth_getBalance', ['0xab', 'latest']))).to.equal('eth_getBalance["0xab","latest"]');
    for (const method of [
      'eth_newFilter',
      'eth_getFilterChanges',
      'eth_newBlockFilter',
      'eth_sendRawTransaction',
      'eth_call',
      'eth_estimateGas',
    ]) {
      expect(reads.keyOf(request(method, [{}])), method).to.equal(undefined);
    }
  });

  it('tells every follower the answer once, then leaves the key free for the next read', () => {
    const reads = new InFlightReads();
    expect(reads.follow('k', () => {})).to.equal(false);
    const settle = reads.lead('k');
    const told: Array<string | undefined> = [];
    expect(reads.follow('k', (answer) => told.push(answer?.toString()))).to.equal(true);
    expect(reads.follow('k', (answer) => told.push(answer?.toString()))).to.equal(true);
    settle(Buffer.from('a'));
    settle(undefined);
    expect(told).to.deep.equal(['a', 'a']);
    expect(reads.follow('k', () => {})).to.equal(false);
  });
});
