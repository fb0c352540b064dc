import { expect } from 'chai';
import { HeavyTurns, type HeavyTurn } from '../../src/heavy-turns.js';

/** A turn that records its start and keeps its end for the test to call. */
function recorder() {
  const started: string[] = [];
  const dropped: string[] = [];
  const ends = new Map<string, () => void>();
  const turn = (name: string, gone = () => false): HeavyTurn => ({
    gone,
    start: (ended) => {
      started.push(name);
      ends.set(name, ended);
    },
    dropped: () => dropped.push(name),
  });
  return { started, dropped, end: (name: string) => ends.get(name)!(), turn };
}

describe("heavy turns: gas-heavy reads' turns on their EL connections", () => {
  it('runs at most as many calls as there are connections, the next when one ends', () => {
    const turns = new HeavyTurns(2);
    const r = recorder();
    for (const name of ['a1', 'b1', 'c1']) turns.take(name[0]!, r.turn(name));
    expect(r.started).to.deep.equal(['a1', 'b1']);
    expect(turns.queued).to.equal(1);
    r.end('a1');
    r.end('a1');
    expect(r.started).to.deep.equal(['a1', 'b1', 'c1']);
    expect(turns.queued).to.equal(0);
  });

  it("serves waiting sources in turn: another source's call waits behind at most one of each backlog", () => {
    const turns = new HeavyTurns(1);
    const r = recorder();
    for (const name of ['a1', 'a2', 'a3', 'a4', 'b1']) turns.take(name[0]!, r.turn(name));
    for (const name of ['a1', 'a2', 'b1', 'a3']) r.end(name);
    expect(r.started).to.deep.equal(['a1', 'a2', 'b1', 'a3', 'a4']);
  });

  it('drops a call whose client left before its turn, telling it, and goes on', () => {
    const turns = new HeavyTurns(1);
    const r = recorder();
    let left = false;
    turns.take('a', r.turn('a1'));
    turns.take(
      'b',
      r.turn('b1', () => left),
    );
    turns.take('c', r.turn('c1'));
    left = true;
    r.end('a1');
    expect(r.started).to.deep.equal(['a1', 'c1']);
    expect(r.dropped).to.deep.equal(['b1']);
  });

  it('takes a new number of connections at once: more start waiting calls, fewer count the running ones', () => {
    const turns = new HeavyTurns(1);
    const r = recorder();
    for (const name of ['a1', 'b1', 'c1', 'd1']) turns.take(name[0]!, r.turn(name));
    turns.resize(3);
    expect(r.started).to.deep.equal(['a1', 'b1', 'c1']);
    turns.resize(1);
    r.end('a1');
    r.end('b1');
    expect(r.started, 'two still running against a cap of one').to.deep.equal(['a1', 'b1', 'c1']);
    r.end('c1');
    expect(r.started).to.deep.equal(['a1', 'b1', 'c1', 'd1']);
  });
});
