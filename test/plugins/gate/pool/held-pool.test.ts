import { expect } from 'chai';
import { holdPool } from '../../../../plugins/gate/pool/held-pool.js';
import type { WorkPool } from '../../../../plugins/gate/pool/work-pool.js';
import { CarryOver } from '../../../../src/carry-over.js';

/** A pool that counts what is made and closed. */
function pools() {
  const made: string[] = [];
  const closed: string[] = [];
  const make = (name: string) => (): WorkPool => {
    made.push(name);
    return {
      verify: async () => {},
      simulate: async () => ({ accounts: [], codes: [], slots: [] }),
      recover: async () => undefined,
      authorities: async () => [],
      estimate: async () => ({ unknownBlock: 'latest' }),
      close: async () => void closed.push(name),
    };
  };
  return { made, closed, make };
}

describe('gate: the worker pool held across reloads', () => {
  it('hands the running pool to a reload with the same numbers, closed once the last chain lets go', async () => {
    const p = pools();
    const first = new CarryOver();
    const running = holdPool(first, 'n1', p.make('one'));
    const next = new CarryOver(first.kept);
    const reloaded = holdPool(next, 'n1', p.make('two'));
    next.commit();
    expect(reloaded.pool).to.equal(running.pool);
    await running.letGo();
    await running.letGo();
    expect(p.closed).to.deep.equal([]);
    await reloaded.letGo();
    expect([p.made, p.closed]).to.deep.equal([['one'], ['one']]);
  });

  it('starts a new pool for new numbers, and closes the old one when its chain retires', async () => {
    const p = pools();
    const first = new CarryOver();
    const running = holdPool(first, 'n1', p.make('one'));
    const reloaded = holdPool(new CarryOver(first.kept), 'n2', p.make('two'));
    expect(reloaded.pool).to.not.equal(running.pool);
    await running.letGo();
    expect(p.closed).to.deep.equal(['one']);
    await reloaded.letGo();
    expect(p.closed).to.deep.equal(['one', 'two']);
  });

  it('keeps the running pool when a reload fails to build: its chain lets go, the running one holds on', async () => {
    const p = pools();
    const first = new CarryOver();
    const running = holdPool(first, 'n1', p.make('one'));
    const failed = holdPool(new CarryOver(first.kept), 'n1', p.make('two'));
    await failed.letGo();
    expect(p.closed).to.deep.equal([]);
    await running.letGo();
    expect(p.closed).to.deep.equal(['one']);
  });
});
