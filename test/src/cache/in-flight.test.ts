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

  it('keeps the keys of settled reads until there are 1,024 keys, then sweeps them, never one in flight', () => {
    const reads = new InFlightReads();
    const leading = (reads as unknown as { leading: Map<string, unknown> }).leading;
    const inFlight = reads.lead('in flight');
    for (let i = 0; i < 1_023; i++) reads.lead(`k${i}`)(undefined);
    expect(leading.size).to.equal(1_024);
    expect(
      reads.follow('k0', () => {}),
      'a settled key is led again, not followed',
    ).to.equal(false);
    reads.lead('k0')(undefined);
    expect(leading.size).to.equal(1_024);
    reads.lead('new');
    expect([...leading.keys()]).to.deep.equal(['in flight', 'new']);
    const told: unknown[] = [];
    expect(reads.follow('in flight', (answer) => told.push(answer))).to.equal(true);
    inFlight(undefined);
    expect(told).to.deep.equal([undefined]);
  });

  it('lets a settled key over 256 characters go at once: params may be as large as a body', () => {
    const reads = new InFlightReads();
    const leading = (reads as unknown as { leading: Map<string, unknown> }).leading;
    const long = reads.keyOf(request('eth_getBalance', ['0xab', 'latest', 'x'.repeat(512 * 1024)]))!;
    reads.lead(long)(undefined);
    reads.lead('x'.repeat(256))(undefined);
    expect([...leading.keys()].map((key) => key.length)).to.deep.equal([256]);
  });

  it('sweeps again only past twice what the last sweep kept: many reads in flight are not scanned at each new key', () => {
    const reads = new InFlightReads();
    const leading = (reads as unknown as { leading: Map<string, unknown> }).leading;
    for (let i = 0; i < 1_500; i++) reads.lead(`held${i}`);
    expect(leading.size, 'nothing settled, nothing swept').to.equal(1_500);
    // The sweep at 1,024 kept every key: the next is at 2,048, so settled keys stay until then.
    for (let i = 0; i < 548; i++) reads.lead(`s${i}`)(undefined);
    expect(leading.size).to.equal(2_048);
    reads.lead('next');
    expect(leading.size).to.equal(1_501);
  });
});
