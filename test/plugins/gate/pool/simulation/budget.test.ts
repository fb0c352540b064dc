import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import {
  ComputeBudget,
  DEFAULT_SIMULATION_BUDGET_MS,
  OverBudget,
  ThreadShares,
} from '../../../../../plugins/gate/pool/simulation/budget.js';

/** Keeps the thread busy for `ms`. */
const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('gate: the compute budget of one simulation', () => {
  it(`is ${DEFAULT_SIMULATION_BUDGET_MS} ms by default`, () => {
    expect(DEFAULT_SIMULATION_BUDGET_MS).to.equal(200);
  });

  it('counts compute, not the time spent waiting for EL reads', async () => {
    const budget = new ComputeBudget(30, new ThreadShares());
    spin(5);
    expect(await budget.waiting(sleep(60, 'read'))).to.equal('read');
    budget.check();
    expect(budget.computeMs()).to.be.within(5, 25);
  });

  it('throws OverBudget at the first check past the budget, naming it', () => {
    const budget = new ComputeBudget(20, new ThreadShares());
    spin(10);
    budget.check();
    spin(15);
    expect(() => budget.check()).to.throw(OverBudget, 'over the simulation budget of 20 ms');
    expect(budget.computeMs()).to.be.at.least(25);
  });

  it('counts a failed read as waiting too', async () => {
    const budget = new ComputeBudget(30, new ThreadShares());
    const failed = await budget.waiting(sleep(50).then(() => Promise.reject(new Error('unavailable')))).catch((err: Error) => err.message);
    expect(failed).to.equal('unavailable');
    expect(budget.computeMs()).to.be.below(25);
  });

  it("shares the thread's time among the tasks that can run: two runnable for 40 ms are charged ~20 ms each", async () => {
    const shares = new ThreadShares();
    const [a, b] = [new ComputeBudget(1_000, shares), new ComputeBudget(1_000, shares)];
    spin(40);
    expect([a.computeMs(), b.computeMs()].map((ms) => ms >= 18 && ms <= 30)).to.deep.equal([true, true]);
    // b waits for the EL: a has the thread to itself.
    const read = b.waiting(sleep(30));
    spin(20);
    await read;
    a.end();
    const charged = a.computeMs();
    expect(charged).to.be.within(38, 55);
    spin(10);
    expect(a.computeMs(), 'ended: charged no more').to.equal(charged);
    b.end();
  });

  it('ends once: a second end, or a read after it, takes no share', async () => {
    const shares = new ThreadShares();
    const budget = new ComputeBudget(1_000, shares);
    budget.end();
    budget.end();
    await budget.waiting(Promise.resolve());
    const alone = new ComputeBudget(1_000, shares);
    spin(20);
    expect(alone.computeMs(), 'the only runnable task').to.be.at.least(19);
  });
});
