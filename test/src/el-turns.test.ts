import { expect } from 'chai';
import { type CallRefusal, type ElLanes, type ElTurn, ElTurns, type Lane } from '../../src/el-turns.js';

const LANES: ElLanes = { heavy: 1, quick: 1, quickMost: 1, quickGas: 2_000_000n, quickMs: 50, callMs: 5_000 };
const SMALL = 21_000n;
const LARGE = 50_000_000n;

/** Turns that record where they started and keep their ends for the test to call, on a clock it moves. */
function harness(lanes: ElLanes = LANES) {
  let clock = 0;
  const turns = new ElTurns(lanes, () => clock);
  const started: string[] = [];
  const lanesOf = new Map<string, Lane>();
  const dropped: string[] = [];
  const refused: Array<{ name: string } & CallRefusal> = [];
  const ends = new Map<string, (elMs: number) => void>();
  const take = (name: string, gas: bigint, options: { target?: string; gone?: () => boolean; searches?: boolean } = {}) =>
    turns.take({
      source: name.replace(/\d+$/, ''),
      target: options.target,
      gas,
      searches: options.searches,
      gone: options.gone ?? (() => false),
      start: (lane, ended) => {
        started.push(name);
        lanesOf.set(name, lane);
        ends.set(name, ended);
      },
      dropped: () => dropped.push(name),
      refused: (refusal) => refused.push({ name, ...refusal }),
    } satisfies ElTurn);
  /**
   * Ends `name`'s call, `elMs` after it reached the EL; the clock moves on by `advance`. Unless
   * `held`, another read was answered quickly just before it (the EL was serving reads).
   */
  const end = (name: string, elMs: number, advance = elMs, held = false) => {
    clock += advance;
    if (!held) turns.answered(1);
    ends.get(name)!(elMs);
  };
  /** `count` tiny calls to `target` (each from a source of its own), each answered in 1 ms: the quick lane's limit grows. */
  const warm = (target: string, count: number) => {
    for (let i = 0; i < count; i++) {
      take(`warm${i}x`, LARGE, { target });
      end(`warm${i}x`, 1);
    }
  };
  /**
   * A call of 140 ms to `target` that ran on the quick lane while the EL answered reads of `others`
   * ms each, 60 ms after it reached the EL (so a quick one among them shows it was not held).
   */
  const longAmong = (name: string, target: string, others: readonly number[]) => {
    take(name, LARGE, { target });
    expect(lanesOf.get(name), name).to.equal('quick');
    clock += 60;
    for (const ms of others) turns.answered(ms);
    end(name, 140, 80, true);
  };
  return { turns, take, end, warm, longAmong, started, lanesOf, dropped, refused, advance: (ms: number) => (clock += ms) };
}

/** A quick lane of 50 ms for two calls, where a's, b's and c's calls to their targets are known to take 40, 40 and 8 ms. */
function learnt() {
  const h = harness({ ...LANES, quickMost: 2 });
  // Learnt on the heavy lane, each a first call to its target.
  for (const [name, target, elMs] of [
    ['a0', 't40', 40],
    ['b0', 't40b', 40],
    ['c0', 't8', 8],
  ] as const) {
    h.take(name, LARGE, { target });
    h.end(name, elMs);
  }
  return h;
}

describe('EL turns: gas-heavy reads shared by measured EL time', () => {
  it('runs a small call on the quick lane while a large one holds the heavy lane', () => {
    const h = harness();
    h.take('attacker1', LARGE);
    h.take('victim1', SMALL);
    expect(h.started).to.deep.equal(['attacker1', 'victim1']);
    expect(h.lanesOf.get('attacker1')).to.equal('heavy');
    expect(h.lanesOf.get('victim1')).to.equal('quick');
  });

  it('runs short calls on the quick lane at once while the EL time expected of them fits its budget', () => {
    const h = harness({ ...LANES, quickMost: 32 });
    h.take('a1', LARGE, { target: 'view' });
    h.end('a1', 1);
    // Tiny (measured at 1 ms): one at a time at first, up to 32 once ~500 of them kept their promise.
    for (let i = 0; i < 3; i++) h.take(`s${i}x`, LARGE, { target: 'view' });
    expect([h.turns.runningOn('quick'), h.turns.runningOn('heavy')]).to.deep.equal([1, 1]);
    h.end('s0x', 1);
    h.end('s1x', 1);
    h.end('s2x', 1);
    h.warm('view', 600);
    // One source whose own calls to the view kept the promise.
    h.take('t0', LARGE, { target: 'view' });
    h.end('t0', 1);
    for (let i = 1; i <= 40; i++) h.take(`t${i}`, LARGE, { target: 'view' });
    expect(h.turns.runningOn('quick')).to.equal(32);
    expect(h.turns.runningOn('heavy')).to.equal(1);
    expect(h.turns.queued).to.equal(7);
  });

  it("runs one call at a time per target on what the target's calls took, from sources new to it: a crowd cannot run on one promise", () => {
    const h = harness({ ...LANES, quickMost: 32 });
    h.warm('view', 600);
    // Sixteen sources new to the view at once: one on the quick lane, one on the heavy one.
    for (let i = 0; i < 16; i++) h.take(`n${i}x`, LARGE, { target: 'view' });
    expect([h.turns.runningOn('quick'), h.turns.runningOn('heavy')]).to.deep.equal([1, 1]);
    // The first ran long: its source is marked, the next new one goes on the quick lane.
    h.end('n0x', 600);
    expect(h.lanesOf.get('n2x')).to.equal('quick');
    expect([h.turns.runningOn('quick'), h.turns.runningOn('heavy')]).to.deep.equal([1, 1]);
    // A source proven on the view runs beside them.
    h.take('p0', LARGE, { target: 'other' });
    expect(h.turns.runningOn('quick')).to.equal(1);
  });

  it('halves how many tiny calls run at once each time one runs long, and grows it back by one per window that kept the promise', () => {
    const h = harness({ ...LANES, quickMost: 8 });
    h.take('a1', LARGE, { target: 'view' });
    h.end('a1', 1);
    h.warm('view', 100);
    // Three sources known to the view (a short call each) whose calls turned dear (their calldata): 8 -> 4 -> 2 -> 1 at once.
    for (const name of ['x0', 'y0', 'z0']) {
      h.take(name, LARGE, { target: 'view' });
      h.end(name, 1);
    }
    for (const name of ['x1', 'y1', 'z1']) h.take(name, LARGE, { target: 'view' });
    for (const name of ['x1', 'y1', 'z1']) h.end(name, 600);
    h.advance(60_000);
    for (let i = 1; i <= 5; i++) h.take(`v${i}`, LARGE, { target: 'view' });
    expect([h.turns.runningOn('quick'), h.turns.runningOn('heavy')]).to.deep.equal([1, 1]);
    // One call that kept the promise: 2 at once.
    h.end('v1', 1);
    expect(h.turns.runningOn('quick')).to.equal(2);
  });

  it('runs tiny calls bound by their gas at once, whatever the window of calls learned by their target', () => {
    const h = harness({ ...LANES, quickMost: 8 });
    for (let i = 0; i < 10; i++) h.take(`g${i}x`, 30_000n);
    expect(h.turns.runningOn('quick')).to.equal(8);
  });

  it('runs a call that may take quick_call_ms alone on the quick lane; smaller ones fill what it leaves', () => {
    const h = harness({ ...LANES, heavy: 0, quickMost: 32 });
    h.take('a1', 2_000_000n);
    h.take('b1', 2_000_000n);
    expect(h.started).to.deep.equal(['a1']);
    h.end('a1', 25);
    expect(h.started).to.deep.equal(['a1', 'b1']);
    // 1,000,000 gas: up to 25 ms expected; two fit the budget together, a third waits.
    for (const name of ['c1', 'd1', 'e1']) h.take(name, 1_000_000n);
    h.end('b1', 25);
    expect(h.started).to.deep.equal(['a1', 'b1', 'c1', 'd1']);
    expect(h.turns.queued).to.equal(1);
  });

  it('sends a call asking for more than quick_call_gas to an unmeasured target to the heavy lane only', () => {
    const h = harness();
    h.take('a1', LARGE, { target: 't' });
    h.take('b1', LARGE, { target: 't' });
    expect(h.started).to.deep.equal(['a1']);
    expect(h.turns.runningOn('quick')).to.equal(0);
    expect(h.turns.queued).to.equal(1);
  });

  it('lets a gasless call to a target measured short lately run on the quick lane, from anyone', () => {
    const h = harness();
    h.take('a1', LARGE, { target: 'balanceOf' });
    h.end('a1', 3);
    h.take('big1', LARGE);
    h.take('b1', LARGE, { target: 'balanceOf' });
    expect(h.lanesOf.get('big1')).to.equal('heavy');
    expect(h.lanesOf.get('b1')).to.equal('quick');
  });

  it('keeps a target never measured short out of the quick lane, and one measured long twice lately until the marks fade (half-life 5 s)', () => {
    const h = harness();
    h.take('a1', LARGE, { target: 'loop' });
    h.end('a1', 400);
    h.advance(60_000);
    h.take('b1', LARGE, { target: 'loop' });
    h.take('c1', LARGE, { target: 'loop' });
    expect(h.lanesOf.get('b1')).to.equal('heavy');
    expect(h.turns.runningOn('quick')).to.equal(0);
    h.end('b1', 1);
    h.end('c1', 1);
    // Now measured short; then long twice (from the heavy lane: the target is marked, no source).
    h.take('d1', LARGE, { target: 'loop' });
    expect(h.lanesOf.get('d1')).to.equal('quick');
    h.end('d1', 2);
    for (const name of ['e1', 'f1']) {
      h.take(name, LARGE, { target: 'other' });
      h.take(`${name}x`, LARGE, { target: 'loop' });
    }
    h.end('e1', 400);
    h.end('f1', 400);
    h.end('e1x', 400);
    h.end('f1x', 400);
    h.take('g1', LARGE, { target: 'loop' });
    expect(h.lanesOf.get('g1')).to.equal('heavy');
    h.end('g1', 1);
    // 400 fades below 50 in three half-lives.
    h.advance(15_001);
    h.take('i1', LARGE, { target: 'loop' });
    expect(h.lanesOf.get('i1')).to.equal('quick');
  });
  it('keeps a source whose large calls on proven targets ran long twice out of the quick lane for its large calls', () => {
    const h = harness({ ...LANES, quick: 2, quickMost: 2 });
    // 10 ms: not tiny, two fit the lane's budget of 2 x 50 ms.
    for (const target of ['multicall', 'router', 'balanceOf']) {
      h.take(`a${target}`, LARGE, { target });
      h.end(`a${target}`, 10);
    }
    h.take('attacker1', LARGE, { target: 'multicall' });
    h.take('attacker2', LARGE, { target: 'router' });
    expect([h.lanesOf.get('attacker1'), h.lanesOf.get('attacker2')]).to.deep.equal(['quick', 'quick']);
    h.end('attacker1', 600);
    h.end('attacker2', 600);
    h.take('attacker3', LARGE, { target: 'balanceOf' });
    h.take('victim1', LARGE, { target: 'balanceOf' });
    expect(h.lanesOf.get('attacker3')).to.equal('heavy');
    expect(h.lanesOf.get('victim1')).to.equal('quick');
  });
  it('learns nothing from a call asking for at most quick_call_gas: its time says nothing of a large call to the same code', () => {
    const h = harness();
    h.take('victim1', SMALL, { target: 'loop' });
    expect(h.lanesOf.get('victim1')).to.equal('quick');
    h.end('victim1', 1);
    h.take('attacker1', LARGE, { target: 'loop' });
    h.take('attacker2', LARGE, { target: 'loop' });
    expect(h.lanesOf.get('attacker1')).to.equal('heavy');
    expect(h.turns.runningOn('quick')).to.equal(0);
  });

  it('marks nothing by a long answer while the EL answered no other read quickly: it may have been held (anvil sealing a block)', () => {
    const h = harness();
    h.take('v1', LARGE, { target: 'view' });
    h.end('v1', 2);
    for (let i = 2; i <= 4; i++) {
      h.take(`v${i}`, LARGE, { target: 'view' });
      expect(h.lanesOf.get(`v${i}`)).to.equal('quick');
      h.end(`v${i}`, 230, 230, true);
    }
    // The same time while the EL answered others quickly, twice, marks the source.
    for (const name of ['v5', 'v6']) {
      h.take(name, LARGE, { target: 'view' });
      expect(h.lanesOf.get(name)).to.equal('quick');
      h.end(name, 230);
    }
    h.take('v7', LARGE, { target: 'view' });
    expect(h.lanesOf.get('v7')).to.equal('heavy');
  });

  it("marks nothing, nor halves the tiny calls' window, by a long call while the EL's answers lately took an eighth of it: crowded, not dear", () => {
    const h = harness({ ...LANES, quickMost: 4 });
    h.take('v1', LARGE, { target: 'view' });
    h.end('v1', 2);
    h.warm('view', 20);
    const reads = (ms: number) => Array<number>(100).fill(ms);
    // Crowded: reads take ~18 ms (another proxy on the EL, this one's loop behind), 140 ms is no outlier.
    for (const name of ['v2', 'v3', 'v4']) h.longAmong(name, 'view', reads(20));
    h.take('v5', LARGE, { target: 'view' });
    h.take('v6', LARGE, { target: 'view' });
    expect([h.lanesOf.get('v5'), h.lanesOf.get('v6')], 'the window still lets two run at once').to.deep.equal(['quick', 'quick']);
    h.end('v5', 2);
    h.end('v6', 2);
    // The same calls while the EL answers others in 2 ms: the second marks the source.
    h.longAmong('v7', 'view', reads(2));
    h.longAmong('v8', 'view', reads(2));
    h.take('v9', LARGE, { target: 'view' });
    expect(h.lanesOf.get('v9')).to.equal('heavy');
  });

  it('spares long calls from a cold start until quick answers show the EL is not crowded: a restart under load keeps its lanes', () => {
    const h = harness({ ...LANES, quickMost: 4 });
    h.take('v1', LARGE, { target: 'view' });
    h.end('v1', 2);
    // Nothing measured yet but v1's 2 ms and a few reads of 20 ms: two calls of 140 ms mark nothing.
    const reads = Array<number>(4).fill(20);
    h.longAmong('v2', 'view', reads);
    h.longAmong('v3', 'view', reads);
    h.take('v4', LARGE, { target: 'view' });
    expect(h.lanesOf.get('v4')).to.equal('quick');
    h.end('v4', 2);
    // Fifty reads answered in 2 ms later, the same two calls mark the source.
    h.longAmong('v5', 'view', Array<number>(50).fill(2));
    h.longAmong('v6', 'view', Array<number>(50).fill(2));
    h.take('v7', LARGE, { target: 'view' });
    expect(h.lanesOf.get('v7')).to.equal('heavy');
  });

  it('learns a call of exactly quick_call_ms while the EL is crowded: it is no long call to spare', () => {
    const h = harness();
    for (let i = 0; i < 100; i++) h.turns.answered(20);
    h.take('a1', LARGE, { target: 'view' });
    expect(h.lanesOf.get('a1'), 'a target never measured').to.equal('heavy');
    h.end('a1', 50);
    h.take('a2', LARGE, { target: 'view' });
    expect(h.lanesOf.get('a2')).to.equal('quick');
  });

  it('leaves answers past quick_call_ms out of the typical answer: a crowd of long calls does not raise the bar it is judged by', () => {
    const h = harness({ ...LANES, quickMost: 4 });
    h.take('v1', LARGE, { target: 'view' });
    h.end('v1', 2);
    h.warm('view', 20);
    // 32 sources' calls kept long at once (400 ms each), the EL answering one read quickly meanwhile.
    const crowd = [...Array<number>(100).fill(400), 2];
    h.longAmong('v2', 'view', crowd);
    h.longAmong('v3', 'view', crowd);
    h.take('v4', LARGE, { target: 'view' });
    expect(h.lanesOf.get('v4')).to.equal('heavy');
  });

  it("keeps a target on the quick lane for others while one source's calls to it run long; two sources' mark it", () => {
    const h = harness();
    h.take('victim1', LARGE, { target: 'multicall' });
    h.end('victim1', 3);
    // One source's dear calls (calldata past the selector): three long, from either lane.
    for (const name of ['attacker1', 'attacker2', 'attacker3']) {
      h.take(name, LARGE, { target: 'multicall' });
      h.end(name, 600);
    }
    h.take('attacker4', LARGE, { target: 'multicall' });
    h.take('victim2', LARGE, { target: 'multicall' });
    expect([h.lanesOf.get('attacker4'), h.lanesOf.get('victim2')]).to.deep.equal(['heavy', 'quick']);
    h.end('attacker4', 600);
    h.end('victim2', 3);
    // A second source's long call on it marks the target: a source new to it waits for the heavy
    // lane, one whose own calls to it were short keeps the quick one.
    h.take('other1', LARGE, { target: 'multicall' });
    expect(h.lanesOf.get('other1')).to.equal('quick');
    h.end('other1', 600);
    h.take('newcomer1', LARGE, { target: 'multicall' });
    h.take('victim3', LARGE, { target: 'multicall' });
    expect([h.lanesOf.get('newcomer1'), h.lanesOf.get('victim3')]).to.deep.equal(['heavy', 'quick']);
  });

  it('says a long call may have been held unless the EL answered another read quickly once it had it', () => {
    const h = harness();
    h.advance(1_000);
    expect([h.turns.held(900, 30), h.turns.held(900, 300)]).to.deep.equal([false, true]);
    h.turns.answered(2);
    expect([h.turns.held(900, 300), h.turns.held(990, 300)]).to.deep.equal([false, true]);
  });

  it('sends a small call to the quick lane whatever its source ran before: its gas bounds it', () => {
    const h = harness();
    h.take('a1', LARGE, { target: 'multicall' });
    h.end('a1', 5);
    h.take('attacker1', LARGE, { target: 'multicall' });
    h.end('attacker1', 600);
    h.take('attacker2', SMALL, { target: 'multicall' });
    expect(h.lanesOf.get('attacker2')).to.equal('quick');
  });

  it('serves the source that used the least EL time first, not one request per turn', () => {
    const h = harness({ ...LANES, quick: 0 });
    h.take('a1', SMALL);
    for (const name of ['a2', 'a3', 'b1', 'b2', 'b3']) h.take(name, SMALL);
    // a used 100 ms; b, which used nothing, goes three times before a goes again.
    h.end('a1', 100);
    h.end('b1', 30);
    h.end('b2', 30);
    h.end('b3', 30);
    h.end('a2', 100);
    expect(h.started).to.deep.equal(['a1', 'b1', 'b2', 'b3', 'a2', 'a3']);
  });

  it('gives each waiting source a share in proportion to the inverse of its calls’ EL time', () => {
    const h = harness({ ...LANES, quick: 0 });
    const served = { a: 0, b: 0 };
    const cost = { a: 1_000, b: 10 };
    let next = 0;
    const feed = (source: 'a' | 'b') => h.take(`${source}${++next}`, SMALL);
    feed('a');
    feed('b');
    feed('a');
    feed('b');
    for (let i = 0; i < 200; i++) {
      const running = h.started.at(-1)!;
      const source = running[0] as 'a' | 'b';
      served[source]++;
      h.end(running, cost[source]);
      feed(source);
    }
    // 1,000 ms against 10 ms: b is served ~100 times per time a is.
    expect(served.a).to.be.within(1, 3);
    expect(served.b).to.be.above(195);
  });

  it('does not let an idle source bank time: one back from idling starts at the present virtual time', () => {
    const h = harness({ ...LANES, quick: 0 });
    h.take('b1', SMALL);
    h.end('b1', 1);
    for (let i = 1; i <= 5; i++) {
      h.take(`a${i}`, SMALL);
      h.end(`a${i}`, 100);
    }
    h.take('a6', SMALL);
    h.take('a7', SMALL);
    h.take('b2', SMALL);
    h.end('a6', 100);
    // b is served next, once: not five times to catch up on what a used while b was away.
    h.take('b3', SMALL);
    h.end('b2', 100);
    expect(h.started.slice(-3)).to.deep.equal(['a6', 'b2', 'a7']);
  });

  it('runs at most as many calls as each lane has connections, the next when one ends', () => {
    const h = harness({ ...LANES, heavy: 2, quick: 0 });
    for (const name of ['a1', 'b1', 'c1']) h.take(name, SMALL);
    expect(h.started).to.deep.equal(['a1', 'b1']);
    h.end('a1', 5);
    h.end('a1', 5);
    expect(h.started).to.deep.equal(['a1', 'b1', 'c1']);
    expect(h.turns.queued).to.equal(0);
  });

  it('drops a call whose client left before its turn, telling it, and goes on', () => {
    const h = harness({ ...LANES, quick: 0 });
    let left = false;
    h.take('a1', SMALL);
    h.take('b1', SMALL, { gone: () => left });
    h.take('c1', SMALL);
    left = true;
    h.end('a1', 1);
    expect(h.started).to.deep.equal(['a1', 'c1']);
    expect(h.dropped).to.deep.equal(['b1']);
  });

  it('takes new lanes at once: more start waiting calls, fewer count the running ones', () => {
    const h = harness({ ...LANES, quick: 0 });
    for (const name of ['a1', 'b1', 'c1', 'd1']) h.take(name, SMALL);
    h.turns.resize({ ...LANES, heavy: 3, quick: 0 });
    expect(h.started).to.deep.equal(['a1', 'b1', 'c1']);
    h.turns.resize({ ...LANES, heavy: 1, quick: 0 });
    h.end('a1', 1);
    h.end('b1', 1);
    expect(h.started, 'two still running against a lane of one').to.deep.equal(['a1', 'b1', 'c1']);
    h.end('c1', 1);
    expect(h.started).to.deep.equal(['a1', 'b1', 'c1', 'd1']);
  });

  it("takes as a call's own work only what came after another source's long call that held it: no quick answer from its start to that end", () => {
    const h = harness();
    h.take('a1', LARGE);
    h.advance(100);
    h.turns.answered(1);
    h.end('a1', 1_000, 900, true);
    // At 1,000: v's call, from 450, waited behind a's; from 49, the answer at 100 shows the EL answering meanwhile.
    expect(h.turns.ownMs(450, 550, 'v')).to.equal(0);
    expect(h.turns.held(450, 550, 'v')).to.equal(true);
    // 50 ms of its own, exactly quick_call_ms: still held.
    h.advance(50);
    expect(h.turns.held(450, 600, 'v')).to.equal(true);
    h.advance(1);
    h.turns.answered(1);
    expect([h.turns.ownMs(450, 601, 'v'), h.turns.held(450, 601, 'v'), h.turns.ownMs(49, 1_002, 'v')]).to.deep.equal([51, false, 1_002]);
    expect(h.turns.ownMs(450, 601, 'a'), 'not by a call of its own source').to.equal(601);
    expect(h.turns.ownMs(50, 1_001, 'v')).to.equal(51);
    // No quick answer at all since it started (at 1,051 - 50 or later): held throughout.
    h.advance(200);
    expect(h.turns.ownMs(1_001, 250)).to.equal(0);
  });

  it('counts a read answered within quick_call_ms, to the millisecond, as the EL serving reads', () => {
    const h = harness();
    h.advance(1_000);
    h.turns.answered(51);
    expect(h.turns.held(900, 51), 'a 51 ms answer shows nothing').to.equal(true);
    h.turns.answered(50);
    // Answered at 1,000: a call that reached the EL at 950 (within 50 ms before) may still have been held, one at 949 not.
    expect([h.turns.held(950, 51), h.turns.held(949, 51)]).to.deep.equal([true, false]);
    expect(h.turns.held(0, 50), 'a call of exactly quick_call_ms is never taken as held').to.equal(false);
  });

  it('keeps a tiny-call window shrunk by new lanes: grown back, it still runs what it learned, not the new ceiling', () => {
    const h = harness({ ...LANES, quickMost: 32 });
    h.take('a1', LARGE, { target: 'view' });
    h.end('a1', 1);
    h.warm('view', 600);
    h.turns.resize({ ...LANES, quickMost: 4 });
    h.turns.resize({ ...LANES, quickMost: 32 });
    h.take('t0', LARGE, { target: 'view' });
    h.end('t0', 1);
    for (let i = 1; i <= 20; i++) h.take(`t${i}`, LARGE, { target: 'view' });
    expect(h.turns.runningOn('quick')).to.equal(4);
  });

  it('forgets a source whose only call was dropped, and remembers one running, waiting, or owed virtual time', () => {
    const h = harness({ ...LANES, quick: 0 });
    let left = false;
    h.take('a1', SMALL);
    h.take('b1', SMALL, { gone: () => left });
    expect(h.turns.remembered, 'a running, b waiting').to.equal(2);
    left = true;
    h.end('a1', 5);
    // b's call was dropped unrun: nothing of it counts. a's 5 ms are ahead of the virtual clock.
    expect(h.turns.remembered).to.equal(1);
  });

  it('weighs a source by the EL time its calls took, the 1 ms charged up front included: two calls of 5 ms as one of 10', () => {
    const h = harness({ ...LANES, quick: 0 });
    h.take('a1', SMALL);
    h.end('a1', 5);
    h.take('b1', SMALL);
    h.end('b1', 10);
    h.take('a2', SMALL);
    h.end('a2', 5);
    // a and b have used 10 ms each: a tie, which goes to a, ready first.
    h.take('c1', SMALL);
    h.take('a3', SMALL);
    h.take('b2', SMALL);
    h.end('c1', 1);
    expect(h.started).to.deep.equal(['a1', 'b1', 'a2', 'c1', 'a3']);
  });

  it("runs a source's backlog one call after another, then leaves nothing behind it waiting", () => {
    const h = harness({ ...LANES, quick: 0 });
    h.take('a1', SMALL);
    h.take('a2', SMALL);
    h.take('a3', SMALL);
    h.take('a4', SMALL);
    for (const name of ['a1', 'a2', 'a3', 'a4']) h.end(name, 1);
    h.take('b1', SMALL);
    expect(h.started).to.deep.equal(['a1', 'a2', 'a3', 'a4', 'b1']);
    expect([h.turns.queued, h.turns.runningOn('heavy')]).to.deep.equal([0, 1]);
  });

  it('takes a source back from idle where a new one starts: an old, small tag puts it ahead of nobody waiting', () => {
    const h = harness({ ...LANES, quick: 0 });
    h.take('r1', SMALL);
    h.end('r1', 1);
    h.take('a1', SMALL);
    h.end('a1', 100);
    h.take('a2', SMALL);
    // The clock is at a2's start now: r's 1 ms is long behind it, and w comes first.
    h.take('w1', SMALL);
    h.take('r2', SMALL);
    h.end('a2', 1);
    expect(h.started).to.deep.equal(['r1', 'a1', 'a2', 'w1']);
  });

  it('remembers at most 10,000 sources: past that the idle ones go, the ones with calls stay', () => {
    const h = harness({ ...LANES, heavy: 2, quick: 0 });
    h.take('busy1', SMALL);
    for (let i = 0; i < 9_997; i++) {
      h.take(`idle${i}x`, SMALL);
      h.end(`idle${i}x`, 1);
    }
    h.take('running1', SMALL);
    h.take('waiting1', SMALL);
    expect([h.turns.remembered, h.turns.queued]).to.deep.equal([10_000, 1]);
    h.take('newcomer1', SMALL);
    expect(h.turns.remembered, 'two running, one waiting, and the newcomer').to.equal(4);
  });

  it('past 10,000 sources forgets first the idle ones the clock has caught up with, keeping one still owed time', () => {
    const h = harness({ ...LANES, heavy: 2, quick: 0 });
    for (let i = 0; i < 9_996; i++) {
      h.take(`idle${i}x`, SMALL);
      h.end(`idle${i}x`, 1);
    }
    h.take('a1', SMALL);
    h.end('a1', 1_000);
    h.take('a2', SMALL);
    // The clock is at 1,000 ms: every idle source is caught up. o's call ends ahead of it.
    h.take('o1', SMALL);
    h.end('o1', 5);
    h.take('p1', SMALL);
    h.take('q1', SMALL);
    expect([h.turns.remembered, h.turns.queued]).to.deep.equal([4, 1]);
    h.take('newcomer1', SMALL);
    expect(h.turns.remembered, 'a and p running, o owed, q and the newcomer waiting').to.equal(5);
  });

  it('takes a target, and a source, measured at exactly quick_call_ms as short', () => {
    const h = harness();
    // Twice at 50 ms by one source, the clock standing still (marks fade with time): the
    // target's least and its second highest are both exactly 50.
    h.take('a1', LARGE, { target: 'view' });
    h.end('a1', 50, 0);
    h.take('big1', LARGE);
    h.take('a2', LARGE, { target: 'view' });
    h.end('a2', 50, 0);
    // A source new to the view goes by the target's: 50 is within quick_call_ms.
    h.take('b1', LARGE, { target: 'view' });
    expect([h.lanesOf.get('a2'), h.lanesOf.get('b1')]).to.deep.equal(['quick', 'quick']);
    // b's own two calls at 50 ms on the quick lane: b stays in it.
    h.end('b1', 50, 0);
    h.take('b2', LARGE, { target: 'view' });
    h.end('b2', 50, 0);
    h.take('b3', LARGE, { target: 'view' });
    expect(h.lanesOf.get('b3')).to.equal('quick');
  });

  it('learns nothing from a call asking for exactly quick_call_gas', () => {
    const h = harness();
    h.take('a1', 2_000_000n, { target: 'view' });
    h.end('a1', 3);
    h.take('big1', LARGE);
    h.take('b1', LARGE, { target: 'view' });
    expect(h.started, 'the view was never measured by a large call: b1 waits for the heavy lane').to.deep.equal(['a1', 'big1']);
  });

  it("moves the tiny calls' window only by tiny calls on the quick lane, and not for one of exactly quick_call_ms", () => {
    const h = harness({ ...LANES, quickMost: 32 });
    h.take('a1', LARGE, { target: 'view' });
    h.end('a1', 1);
    h.warm('view', 600);
    // A long call on the heavy lane, the EL answering others quickly: the window stays.
    h.take('big1', LARGE);
    h.end('big1', 600);
    // A tiny call that took exactly quick_call_ms kept its promise.
    h.take('p0', LARGE, { target: 'view' });
    h.end('p0', 50);
    h.take('t0', LARGE, { target: 'view' });
    h.end('t0', 1);
    for (let i = 1; i <= 40; i++) h.take(`t${i}`, LARGE, { target: 'view' });
    expect(h.turns.runningOn('quick')).to.equal(32);
  });

  it('marks a source by its calls on the quick lane only: long calls on the heavy lane leave its quick calls there', () => {
    const h = harness();
    h.take('v1', LARGE, { target: 'view' });
    h.end('v1', 2);
    for (const name of ['s1', 's2']) {
      h.take(name, LARGE);
      h.end(name, 600);
    }
    h.take('big1', LARGE);
    h.take('s3', LARGE, { target: 'view' });
    expect(h.lanesOf.get('s3')).to.equal('quick');
  });

  it("refuses, before it waits, a call its source's last two on the heavy lane say would take longer than callMs; with less gas, or once that faded, it runs", () => {
    const h = harness();
    h.take('a1', LARGE);
    h.end('a1', 6_000, 60);
    // One dear call may have waited on a busy EL: forgiven.
    h.take('a2', LARGE);
    h.end('a2', 6_000, 60);
    h.take('a3', LARGE);
    expect(h.refused.map(({ name, mostMs }) => [name, mostMs])).to.deep.equal([['a3', 5_000]]);
    const { expectedMs, retryAfterMs } = h.refused[0]!;
    expect(expectedMs).to.be.closeTo(6_000 * 2 ** (-60 / 60_000), 0.01);
    expect(retryAfterMs).to.equal(Math.ceil(60_000 * Math.log2(expectedMs / 5_000)));
    expect(h.turns.queued).to.equal(0);
    // 40,000,000 gas: 4,795 ms expected. Another source is not refused for a's calls.
    h.take('a4', 40_000_000n);
    h.take('b1', LARGE);
    expect(h.started).to.deep.equal(['a1', 'a2', 'a4']);
    expect(h.turns.queued).to.equal(1);
    h.end('a4', 1, 60);
    expect(h.started.at(-1)).to.equal('b1');
    h.end('b1', 1, 60);
    // Small calls run on the quick lane whatever the source's cost.
    h.take('a5', SMALL);
    expect(h.lanesOf.get('a5')).to.equal('quick');
    h.end('a5', 1, 60);
    // Refused at 120 ms: it may run from 120 + retryAfterMs. The clock is at 300.
    h.advance(retryAfterMs - 190);
    h.take('a6', LARGE);
    expect(h.refused.map(({ name }) => name)).to.deep.equal(['a3', 'a6']);
    h.advance(20);
    h.take('a7', LARGE);
    expect(h.started.at(-1)).to.equal('a7');
  });

  it('bounds calls by the callMs a reload gives', () => {
    const h = harness();
    for (const name of ['a1', 'a2']) {
      h.take(name, LARGE);
      h.end(name, 6_000, 60);
    }
    h.turns.resize({ ...LANES, callMs: 7_000 });
    h.take('a3', LARGE);
    expect(h.refused).to.deep.equal([]);
    expect(h.started.at(-1)).to.equal('a3');
    h.end('a3', 1, 60);
    h.turns.resize({ ...LANES, callMs: 5_000 });
    h.take('a4', LARGE);
    expect(h.refused.map(({ name }) => name)).to.deep.equal(['a4']);
  });

  it("checks a call again when its turn comes: what its source's calls ahead of it showed meanwhile counts", () => {
    const h = harness();
    for (const name of ['a1', 'a2', 'a3']) h.take(name, LARGE);
    h.end('a1', 6_000, 60);
    expect(h.started).to.deep.equal(['a1', 'a2']);
    h.end('a2', 6_000, 60);
    expect(h.refused.map(({ name }) => name)).to.deep.equal(['a3']);
    expect([h.turns.queued, h.turns.runningOn('heavy')]).to.deep.equal([0, 0]);
  });

  it("learns a source's searches apart from its single runs, and nothing from calls within quick_call_ms", () => {
    const h = harness();
    for (const name of ['a1', 'a2']) {
      h.take(name, LARGE);
      h.end(name, 400, 60);
    }
    // 400 ms for 50,000,000 gas: a search counted at 16 runs would be expected at 6.4 s.
    h.take('a3', 16n * LARGE, { searches: true });
    expect(h.refused).to.deep.equal([]);
    h.end('a3', 50, 60);
    for (const name of ['b1', 'b2']) {
      h.take(name, 3_000_000n);
      h.end(name, 50, 60);
    }
    h.take('b3', LARGE);
    expect(h.refused).to.deep.equal([]);
  });

  it("refuses a dear source's call to a target others' calls promised short; runs one to a target its own calls kept short", () => {
    const h = harness();
    // The view is short for b; a's own calls to its view are short too.
    for (const [name, target] of [
      ['b1', 'view'],
      ['a1', 'own'],
    ] as const) {
      h.take(name, LARGE, { target });
      h.end(name, 2, 60);
    }
    for (const name of ['a2', 'a3']) {
      h.take(name, LARGE);
      h.end(name, 6_000, 60);
    }
    h.take('a4', LARGE, { target: 'view' });
    h.take('a5', LARGE, { target: 'own' });
    expect(h.refused.map(({ name }) => name)).to.deep.equal(['a4']);
    expect(h.lanesOf.get('a5')).to.equal('quick');
  });

  it("takes no short call's end as what another call waited behind", () => {
    const h = harness();
    h.advance(100);
    h.turns.answered(1);
    h.take('a1', LARGE);
    h.advance(900);
    h.end('a1', 10, 0, true);
    h.advance(20);
    expect(h.turns.ownMs(450, 570, 'v')).to.equal(570);
  });

  it('learns no cost from a long call within eight times what answers within quick_call_ms typically took (a crowded EL)', () => {
    const h = harness();
    // The typical answer starts at 25 ms: 150 ms is within 200.
    for (const name of ['a1', 'a2']) {
      h.take(name, LARGE);
      h.end(name, 150, 60);
    }
    h.take('a3', 2_000_000_000n);
    expect(h.refused).to.deep.equal([]);
  });

  it('learns no cost from a call the EL may have held: two long calls without a quick answer meanwhile refuse nothing', () => {
    const h = harness();
    for (const name of ['a1', 'a2']) {
      h.take(name, LARGE);
      h.end(name, 6_000, 60, true);
    }
    h.take('a3', LARGE);
    expect(h.refused).to.deep.equal([]);
    expect(h.started.at(-1)).to.equal('a3');
  });

  it('counts a call once however often its end is reported', () => {
    const h = harness({ ...LANES, quick: 0, heavy: 1 });
    h.take('a1', SMALL);
    h.take('b1', SMALL);
    h.take('c1', SMALL);
    h.end('a1', 1);
    h.end('a1', 1);
    expect([h.started, h.turns.runningOn('heavy')]).to.deep.equal([['a1', 'b1'], 1]);
  });

  it("gives a call's expected EL time back to the quick lane's budget when it ends, while others run on", () => {
    // Small calls expected by their gas: 1,200,000 gas is 30 ms of a 50 ms budget, 400,000 is 10, 1,800,000 is 45.
    const h = harness({ ...LANES, quickMost: 8 });
    h.take('big1', LARGE);
    h.take('x1', 1_200_000n);
    h.take('y1', 400_000n);
    h.take('z1', 1_800_000n);
    expect(h.started, '30 + 10 fit; 45 more does not').to.deep.equal(['big1', 'x1', 'y1']);
    h.end('x1', 30);
    expect(h.started, '10 + 45 do not fit either').to.deep.equal(['big1', 'x1', 'y1']);
    h.end('y1', 10);
    expect(h.started).to.deep.equal(['big1', 'x1', 'y1', 'z1']);
  });

  it("counts a budgeted call on the quick lane in its budget only, not in the tiny calls' window", () => {
    const h = learnt();
    h.take('d0', LARGE, { target: 'view' });
    h.end('d0', 1);
    // a's 40 ms call takes the quick lane's budget; d's view (1 ms) is tiny: it runs beside it.
    h.take('a1', LARGE, { target: 't40' });
    h.take('d1', LARGE, { target: 'view' });
    expect([h.lanesOf.get('a1'), h.lanesOf.get('d1')]).to.deep.equal(['quick', 'quick']);
  });

  it("takes a newcomer's call to a known target that the quick lane had no room for as no probe of it: the next newcomer probes", () => {
    const h = harness({ ...LANES, quickMost: 2 });
    // u and t are known to answer in 1 ms (learnt on the heavy lane).
    for (const [name, target] of [
      ['s1', 'u'],
      ['s2', 't'],
    ] as const) {
      h.take(name, LARGE, { target });
      h.end(name, 1);
    }
    h.take('u1', LARGE, { target: 'u' });
    // The quick lane's window (one tiny call) is full: n's probe of t goes to the heavy lane.
    h.take('n1', LARGE, { target: 't' });
    expect([h.lanesOf.get('u1'), h.lanesOf.get('n1')]).to.deep.equal(['quick', 'heavy']);
    h.end('u1', 1);
    // n1 still runs, as no probe of t: m may probe t on the quick lane beside it.
    h.take('m1', LARGE, { target: 't' });
    expect(h.lanesOf.get('m1')).to.equal('quick');
  });

  it("leaves a small call out of the tiny calls' window, and out of a target's probes", () => {
    const h = harness({ ...LANES, quickMost: 8 });
    h.take('a1', LARGE, { target: 'view' });
    h.end('a1', 3);
    // A small call to the view runs, expected by its gas (0.5 ms): not one of the window's tiny calls.
    h.take('s1', SMALL, { target: 'view' });
    h.take('big1', LARGE);
    // A source new to the view probes it beside the small call, within a window of one.
    h.take('n1', LARGE, { target: 'view' });
    expect([h.lanesOf.get('s1'), h.lanesOf.get('big1'), h.lanesOf.get('n1')]).to.deep.equal(['quick', 'heavy', 'quick']);
  });

  it('runs a call its target promised within a tenth of quick_call_ms, to the millisecond, as a tiny call', () => {
    const h = harness({ ...LANES, quickMost: 32 });
    h.take('a1', LARGE, { target: 'view' });
    h.end('a1', 5, 0);
    h.take('big1', LARGE);
    for (let i = 2; i <= 12; i++) h.take(`a${i}`, LARGE, { target: 'view' });
    // Tiny: within a window of one at first (as a 5 ms call on the budget, ten would run).
    expect(h.turns.runningOn('quick')).to.equal(1);
  });

  it('keeps the EL time of a source that still has calls waiting: a call it sends then waits behind the others', () => {
    const h = harness({ ...LANES, quick: 0 });
    h.take('a1', LARGE);
    h.take('a2', LARGE);
    h.take('b1', LARGE);
    h.end('a1', 1_000);
    // b has used nothing: its call goes before a's second.
    h.take('a3', LARGE);
    h.take('b2', LARGE);
    h.end('b1', 10);
    expect(h.started).to.deep.equal(['a1', 'b1', 'b2']);
    expect(h.turns.remembered).to.equal(2);
  });

  it("counts in the quick lane's budget only the calls that run on it: one sent to the heavy lane leaves room for the next", () => {
    const h = learnt();
    h.take('a1', LARGE, { target: 't40' });
    // 40 + 40 ms is over the lane's 50: b1 goes to the heavy lane, and takes nothing of the budget.
    h.take('b1', LARGE, { target: 't40b' });
    h.take('c1', LARGE, { target: 't8' });
    expect([h.lanesOf.get('a1'), h.lanesOf.get('b1'), h.lanesOf.get('c1')]).to.deep.equal(['quick', 'heavy', 'quick']);
  });

  it("gives back to the quick lane's budget what an ended call was expected to take, while another still runs", () => {
    const h = learnt();
    h.take('a1', LARGE, { target: 't40' });
    h.take('c1', LARGE, { target: 't8' });
    h.end('a1', 40);
    // 8 ms still expected of c1: b1's 40 fit beside it.
    h.take('b1', LARGE, { target: 't40b' });
    expect([h.lanesOf.get('c1'), h.lanesOf.get('b1')]).to.deep.equal(['quick', 'quick']);
  });

  /**
   * Turns on a clock the test moves, its pumps kept for the test to run, after two calls of
   * source a of 800 ms, each across a seal (at 1,000 and 2,000): a read answered in 1 ms just
   * before the tick, then none until the call ends, then one held since just after it.
   */
  function sealed(lanes: ElLanes = LANES) {
    const clock = { now: 0 };
    const pumps: Array<{ at: number; run: () => void }> = [];
    const turns = new ElTurns(
      lanes,
      () => clock.now,
      (run, ms) => pumps.push({ at: clock.now + ms, run }),
    );
    const started: string[] = [];
    const ends = new Map<string, (elMs: number) => void>();
    const refused: Array<{ name: string } & CallRefusal> = [];
    const take = (name: string, gas = LARGE) =>
      turns.take({
        source: name.replace(/\d+$/, ''),
        target: undefined,
        gas,
        gone: () => false,
        start: (lane, ended) => {
          started.push(`${name} ${lane} at ${clock.now}`);
          ends.set(name, ended);
        },
        dropped: () => {},
        refused: (refusal) => refused.push({ name, ...refusal }),
      });
    for (const [name, from, tick, to] of [
      ['a1', 600, 1_000, 1_400],
      ['a2', 1_600, 2_000, 2_400],
    ] as const) {
      clock.now = from;
      take(name);
      clock.now = tick - 3;
      turns.answered(1);
      clock.now = to;
      ends.get(name)!(to - from);
      clock.now = to + 3;
      turns.answered(to + 3 - (tick + 4));
    }
    return { turns, clock, pumps, started, ends, take, refused };
  }

  it('starts a long call on the heavy lane between the ticks of an EL seen holding reads at its seals (anvil)', () => {
    const { clock, pumps, started, take } = sealed();
    clock.now = 2_430;
    take('a3');
    expect(started).to.deep.equal(['a1 heavy at 600', 'a2 heavy at 1600']);
    expect(pumps.map(({ at }) => at)).to.deep.equal([3_025]);
    clock.now = 3_025;
    pumps[0]!.run();
    expect(started.at(-1)).to.equal('a3 heavy at 3025');
  });

  it("expects a source's next heavy call to take its last, or nine tenths of what was expected of that one if more", () => {
    const { clock, started, ends, take } = sealed();
    // Expected 800 ms: from 3,025 it ends before 4,000.
    clock.now = 3_025;
    take('a3');
    clock.now = 3_100;
    ends.get('a3')!(75);
    // 75 ms, but 720 expected of the next: from 3,130 it ends by 3,875.
    clock.now = 3_130;
    take('a4');
    expect(started.at(-1)).to.equal('a4 heavy at 3130');
    clock.now = 3_300;
    ends.get('a4')!(170);
    // 648 expected of the next: from 3,330 it would end at 3,978, past 3,975.
    clock.now = 3_330;
    take('a5');
    expect(started.at(-1)).to.equal('a4 heavy at 3130');
  });

  it("refuses a call its source's cost says would not fit between two ticks of an EL seen sealing, however far under callMs", () => {
    const { clock, started, take, refused } = sealed();
    // a's two calls: 800 ms for 50,000,000 gas; 61,000,000 gas is expected to take 964 ms, past
    // the 950 ms between two ticks' seals. 59,000,000 (938 ms) waits for the next tick.
    clock.now = 2_430;
    take('a3', 61_000_000n);
    take('a4', 59_000_000n);
    expect(refused.map(({ name, mostMs }) => [name, mostMs])).to.deep.equal([['a3', 950]]);
    expect(refused[0]!.expectedMs).to.be.closeTo(800 * 2 ** (-1_030 / 60_000) * (61 / 50), 0.01);
    expect(started).to.deep.equal(['a1 heavy at 600', 'a2 heavy at 1600']);
    // A minute without a seal: only callMs bounds it.
    clock.now = 62_500;
    take('a5', 61_000_000n);
    expect(refused).to.have.length(1);
  });

  it('tells the seal watch of every short answer on the heavy lane: one after the tick shows the EL answering, no seal', () => {
    const h = harness({ ...LANES, heavy: 2 });
    for (const [i, tick] of [
      [1, 1_000],
      [2, 2_000],
    ] as const) {
      h.advance(tick - 400 - h.advance(0));
      h.take(`l${i}`, LARGE);
      h.advance(397);
      h.turns.answered(1);
      h.advance(7);
      h.take(`s${i}`, LARGE);
      expect(h.started.at(-1)).to.equal(`s${i}`);
      h.end(`s${i}`, 36, 36, true);
      h.end(`l${i}`, 800, 360, true);
      h.advance(3);
      for (const from of [tick + 4, tick + 12]) h.turns.answered(tick + 403 - from);
    }
    h.advance(2_430 - h.advance(0));
    h.take('l3', LARGE);
    expect(h.started.at(-1)).to.equal('l3');
  });

  it("takes a call running at one of the EL's ticks as holding the seal, not held: its time is its own", () => {
    const { turns } = sealed();
    // The last read answered quickly at 1,997; ticks at 3,000, 4,000 ...
    expect(turns.held(2_960, 840)).to.equal(false);
    expect(turns.held(3_030, 400)).to.equal(true);
  });

  it("plans a source's first heavy call between ticks by the dearest cost seen, and runs heavy calls one at a time while seals are seen", () => {
    const { clock, pumps, started, take } = sealed({ ...LANES, heavy: 2 });
    clock.now = 2_430;
    // a's 800 ms per 50,000,000 gas: b's first call, at 2,430, would end past 3,000 - 25.
    take('b1');
    expect(started).to.have.length(2);
    expect(pumps.map(({ at }) => at)).to.deep.equal([3_025]);
    clock.now = 3_025;
    pumps[0]!.run();
    take('c1', 2_100_000n);
    expect(started.slice(2)).to.deep.equal(['b1 heavy at 3025']);
  });

  it('plans a source whose heavy calls were all short by its own last call, not by the dearest cost seen', () => {
    const { clock, started, ends, take } = sealed();
    clock.now = 3_030;
    take('c1');
    clock.now = 3_040;
    ends.get('c1')!(10);
    clock.now = 3_300;
    take('c2');
    expect(started.slice(2)).to.deep.equal(['c1 heavy at 3030', 'c2 heavy at 3300']);
  });

  it('forgets the seals seen when quick_call_ms changes on a reload, and keeps them otherwise', () => {
    const kept = sealed();
    kept.turns.resize({ ...LANES });
    kept.clock.now = 2_430;
    kept.take('a3');
    expect(kept.started.at(-1)).to.equal('a2 heavy at 1600');
    const forgot = sealed();
    forgot.turns.resize({ ...LANES, quickMs: 60 });
    forgot.clock.now = 2_430;
    forgot.take('a3');
    expect(forgot.started.at(-1)).to.equal('a3 heavy at 2430');
  });
});
