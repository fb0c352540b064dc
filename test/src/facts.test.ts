import { expect } from 'chai';
import { CALL_GAS, CLOSED, Facts, OPERATOR, SOURCE, SUBSCRIBER, type Fact } from '../../src/facts.js';

describe('facts: what one plugin records for later ones', () => {
  it("names the core's facts distinctly", () => {
    expect([OPERATOR, SOURCE, CALL_GAS, SUBSCRIBER, CLOSED].map((fact) => fact.name)).to.deep.equal([
      'operator',
      'source',
      'call-gas',
      'subscriber',
      'closed',
    ]);
  });

  it('reads nothing before a fact is set', () => {
    const facts = new Facts();
    for (const fact of [OPERATOR, SOURCE, CALL_GAS, SUBSCRIBER, CLOSED]) expect(facts.get<unknown>(fact), fact.name).to.equal(undefined);
  });

  it('returns exactly the value set, functions included', () => {
    const facts = new Facts();
    const call: Fact<() => void> = { name: 'call' };
    const onClose = () => {};
    facts.set(call, onClose);
    facts.set(OPERATOR, false);
    expect(facts.get(call)).to.equal(onClose);
    expect(facts.get(OPERATOR)).to.equal(false);
    expect(facts.get(CLOSED)).to.equal(undefined);
  });

  it('keys facts by identity, not by name', () => {
    const facts = new Facts();
    const first: Fact<string> = { name: 'twin' };
    const second: Fact<string> = { name: 'twin' };
    facts.set(first, 'a');
    expect(facts.get(second)).to.equal(undefined);
    facts.set(second, 'b');
    expect([facts.get(first), facts.get(second)]).to.deep.equal(['a', 'b']);
  });

  it("keeps each request's facts apart", () => {
    const one = new Facts();
    const other = new Facts();
    one.set(OPERATOR, true);
    expect(other.get(OPERATOR)).to.equal(undefined);
    other.set(OPERATOR, false);
    expect([one.get(OPERATOR), other.get(OPERATOR)]).to.deep.equal([true, false]);
  });

  it('is append-only even for a fact set to undefined: a second set throws, naming it, and the first value stays', () => {
    const facts = new Facts();
    const maybe: Fact<string | undefined> = { name: 'maybe' };
    facts.set(maybe, undefined);
    expect(() => facts.set(maybe, 'later')).to.throw(Error, /^fact "maybe" is already set$/);
    expect(facts.get(maybe)).to.equal(undefined);
    facts.set(CLOSED, true);
    expect(() => facts.set(CLOSED, true)).to.throw(Error, /^fact "closed" is already set$/);
  });
});
