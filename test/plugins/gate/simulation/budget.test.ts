import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { ComputeBudget, DEFAULT_SIMULATION_BUDGET_MS, OverBudget } from '../../../../plugins/gate/simulation/budget.js';

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
    const budget = new ComputeBudget(30);
    spin(5);
    expect(await budget.waiting(sleep(60, 'read'))).to.equal('read');
    budget.check();
    expect(budget.computeMs()).to.be.within(5, 25);
  });

  it('throws OverBudget at the first check past the budget, naming it', () => {
    const budget = new ComputeBudget(20);
    spin(10);
    budget.check();
    spin(15);
    expect(() => budget.check()).to.throw(OverBudget, 'over the simulation budget of 20 ms');
    expect(budget.computeMs()).to.be.at.least(25);
  });

  it('counts a failed read as waiting too', async () => {
    const budget = new ComputeBudget(30);
    const failed = await budget.waiting(sleep(50).then(() => Promise.reject(new Error('unavailable')))).catch((err: Error) => err.message);
    expect(failed).to.equal('unavailable');
    expect(budget.computeMs()).to.be.below(25);
  });
});
