import { expect } from 'chai';
import { RequestTab } from '../../src/request-tab.js';

describe('request tab: what a request costs its source, and what runs when it closes', () => {
  it('takes, owes and records EL time through its keeper; nothing without one', async () => {
    const bare = new RequestTab();
    expect(bare.take(5)).to.equal(undefined);
    bare.owe(5);
    bare.elTime(12);
    const seen: string[] = [];
    const tab = new RequestTab();
    tab.keep({
      take: (tokens) => {
        seen.push(`take ${tokens}`);
        return tokens > 3 ? { error: { code: -32005, message: 'over' } } : undefined;
      },
      owe: (tokens) => void seen.push(`owe ${tokens}`),
      elTime: (ms) => void seen.push(`el ${ms}`),
    });
    expect(tab.take(2)).to.equal(undefined);
    expect(tab.take(4)).to.deep.equal({ error: { code: -32005, message: 'over' } });
    tab.owe(7);
    tab.elTime(12.5);
    expect(seen).to.deep.equal(['take 2', 'take 4', 'owe 7', 'el 12.5']);
  });

  it('asks its keeper for nothing of zero or fewer tokens', () => {
    const seen: number[] = [];
    const tab = new RequestTab();
    tab.keep({ take: (tokens) => void seen.push(tokens), owe: (tokens) => void seen.push(tokens) });
    expect(tab.take(0)).to.equal(undefined);
    tab.take(-1);
    tab.owe(0);
    tab.owe(-3);
    expect(seen).to.deep.equal([]);
  });

  it('is kept once: a later plugin cannot take it over, and an entry left out costs nothing', () => {
    const tab = new RequestTab();
    tab.keep({ owe: () => {} });
    expect(() => tab.keep({})).to.throw('the request tab is already kept');
    expect(tab.take(3)).to.equal(undefined);
  });

  it('runs its close hooks once each, in order, at its close; one added after it runs at once', () => {
    const ran: string[] = [];
    const tab = new RequestTab();
    tab.onClose(() => ran.push('first'));
    tab.onClose(() => ran.push('second'));
    expect(ran).to.deep.equal([]);
    tab.close();
    tab.close();
    expect(ran).to.deep.equal(['first', 'second']);
    tab.onClose(() => ran.push('late'));
    expect(ran).to.deep.equal(['first', 'second', 'late']);
  });

  it('runs every hook even when one throws, then throws the first error', () => {
    const ran: string[] = [];
    const tab = new RequestTab();
    tab.onClose(() => {
      throw new Error('first');
    });
    tab.onClose(() => ran.push('released'));
    tab.onClose(() => {
      throw new Error('second');
    });
    expect(() => tab.close()).to.throw('first');
    expect(ran).to.deep.equal(['released']);
  });
});
