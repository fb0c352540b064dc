import { expect } from 'chai';
import { FairQueue } from '../../src/fair-queue.js';

const drain = <T>(queue: FairQueue<T>): T[] => {
  const out: T[] = [];
  for (let item = queue.next(); item !== undefined; item = queue.next()) out.push(item);
  return out;
};

describe('gate fair queue: waiting work served round-robin by source', () => {
  it("serves one item of each waiting source in turn, each source's own in order", () => {
    const queue = new FairQueue<string>(10, 100);
    for (const item of ['a1', 'a2', 'a3', 'a4']) queue.push('a', item);
    queue.push('b', 'b1');
    queue.push('c', 'c1');
    queue.push('b', 'b2');
    expect(queue.size).to.equal(7);
    expect(drain(queue)).to.deep.equal(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(queue.size).to.equal(0);
  });

  it('puts a newcomer behind at most one item of the source with a backlog', () => {
    const queue = new FairQueue<string>(100, 100);
    for (let i = 1; i <= 50; i++) queue.push('flood', `f${i}`);
    expect(queue.next()).to.equal('f1');
    queue.push('victim', 'v1');
    expect([queue.next(), queue.next()]).to.deep.equal(['f2', 'v1']);
  });

  it('refuses past the per-source bound, naming it, while other sources still queue', () => {
    const queue = new FairQueue<number>(2, 100);
    expect([queue.push('a', 1), queue.push('a', 2), queue.push('a', 3)]).to.deep.equal([undefined, undefined, 'source']);
    expect(queue.push('b', 4)).to.equal(undefined);
    expect(queue.size).to.equal(3);
  });

  it('refuses past the total bound, naming it', () => {
    const queue = new FairQueue<number>(5, 2);
    expect([queue.push('a', 1), queue.push('b', 2), queue.push('c', 3)]).to.deep.equal([undefined, undefined, 'total']);
    expect(queue.next()).to.equal(1);
    expect(queue.push('c', 3)).to.equal(undefined);
  });

  it('drops what is no longer wanted, returns it, and keeps the order of the rest', () => {
    const queue = new FairQueue<string>(10, 10);
    for (const [source, item] of [
      ['a', 'a1'],
      ['a', 'gone-a2'],
      ['b', 'gone-b1'],
      ['c', 'c1'],
      ['a', 'a3'],
    ] as const)
      queue.push(source, item);
    expect(queue.drop((item) => item.startsWith('gone'))).to.deep.equal(['gone-a2', 'gone-b1']);
    expect(queue.size).to.equal(3);
    expect(drain(queue)).to.deep.equal(['a1', 'c1', 'a3']);
    expect(queue.next()).to.equal(undefined);
  });
});
