import { expect } from 'chai';
import { BodyBudget } from '../../src/body-budget.js';

describe('body budget', () => {
  it('takes declared lengths up to the limit and refuses one that does not fit, charging nothing for it', () => {
    const budget = new BodyBudget();
    expect(budget.take(600, 1_000)).to.be.a('function');
    expect(budget.take(401, 1_000)).to.equal(undefined);
    expect(budget.inFlight).to.equal(600);
    expect(budget.take(400, 1_000)).to.be.a('function');
    expect(budget.inFlight).to.equal(1_000);
  });

  it('gets the bytes back once, however often the release is called', () => {
    const budget = new BodyBudget();
    const release = budget.take(700, 1_000)!;
    release();
    release();
    expect(budget.inFlight).to.equal(0);
    expect(budget.take(1_000, 1_000)).to.be.a('function');
  });

  it('never refuses a request without a body, even with the budget spent', () => {
    const budget = new BodyBudget();
    budget.take(1_000, 1_000);
    expect(budget.take(0, 1_000)).to.be.a('function');
    expect(budget.inFlight).to.equal(1_000);
  });

  it('reads the limit per call: a lower one (after a reload) refuses until enough is given back', () => {
    const budget = new BodyBudget();
    const release = budget.take(800, 1_000)!;
    expect(budget.take(100, 500)).to.equal(undefined);
    release();
    expect(budget.take(100, 500)).to.be.a('function');
  });
});
