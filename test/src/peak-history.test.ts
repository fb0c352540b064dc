import { expect } from 'chai';
import { PeakHistory } from '../../src/peak-history.js';

describe('peak history: the dearest EL times measured lately, per key', () => {
  it('knows nothing of a key never measured', () => {
    expect(new PeakHistory(1_000, 10).peaks('a')).to.equal(undefined);
  });

  it('forgives one measurement far above the rest, not two; the least is kept whatever came after', () => {
    const peaks = new PeakHistory(1_000, 10, () => 0);
    peaks.record('a', 3);
    expect(peaks.peaks('a')).to.deep.equal({ highest: 3, lately: 0, least: 3 });
    peaks.record('a', 400);
    expect(peaks.peaks('a')).to.deep.equal({ highest: 400, lately: 3, least: 3 });
    peaks.record('a', 300);
    expect(peaks.peaks('a')).to.deep.equal({ highest: 400, lately: 300, least: 3 });
  });

  it('halves the peaks every half-life after they were made', () => {
    let clock = 5_000;
    const peaks = new PeakHistory(1_000, 10, () => clock);
    peaks.record('a', 400);
    peaks.record('a', 200);
    clock = 6_000;
    expect(peaks.peaks('a')?.highest).to.equal(200);
    expect(peaks.peaks('a')?.lately).to.equal(100);
    clock = 7_000;
    peaks.record('a', 10);
    // 400 and 200 are now 100 and 50.
    expect(peaks.peaks('a')).to.deep.equal({ highest: 100, lately: 50, least: 10 });
    clock = 8_000;
    expect(peaks.peaks('a')).to.deep.equal({ highest: 50, lately: 25, least: 10 });
  });

  it('reads the time itself when not given a clock', () => {
    const peaks = new PeakHistory(60_000, 10);
    peaks.record('a', 400);
    expect(peaks.peaks('a')?.highest).to.be.within(399, 400);
  });

  it('forgets the key measured longest ago once it holds maxKeys', () => {
    let clock = 5_000;
    const peaks = new PeakHistory(1_000, 2, () => clock);
    peaks.record('a', 1);
    peaks.record('b', 2);
    clock = 5_000 + 1_000 / 16;
    peaks.record('a', 3);
    peaks.record('c', 4);
    expect([peaks.peaks('a')?.least, peaks.peaks('b'), peaks.peaks('c')?.least, peaks.size]).to.deep.equal([1, undefined, 4, 2]);
  });

  it('orders keys measured again within a sixteenth of a half-life by their earlier measurement', () => {
    let clock = 5_000;
    const peaks = new PeakHistory(1_000, 2, () => clock);
    peaks.record('a', 1);
    peaks.record('b', 2);
    clock = 5_000 + 1_000 / 16 - 1;
    peaks.record('a', 3);
    peaks.record('c', 4);
    expect([peaks.peaks('a'), peaks.peaks('b')?.least, peaks.peaks('c')?.least]).to.deep.equal([undefined, 2, 4]);
  });

  it('answers against a bound what peaks() answers, at any age, the clock read before the last record too', () => {
    const peaks = new PeakHistory(1_000, 10, () => 0);
    peaks.record('a', 40, 5_000);
    peaks.record('a', 80, 5_000);
    const answers: unknown[] = [];
    const expected: unknown[] = [];
    for (const at of [4_000, 4_999, 5_000, 5_500, 6_000, 6_001, 7_000]) {
      for (const bound of [10, 20, 39.99, 40, 40.01, 50, 79, 80, 81, 160]) {
        const { highest, lately, least } = peaks.peaks('a', at)!;
        expected.push([least <= bound && lately <= bound ? least : undefined, lately > bound, highest > bound]);
        answers.push([peaks.leastIfWithin('a', bound, at), peaks.latelyAbove('a', bound, at), peaks.highestAbove('a', bound, at)]);
      }
    }
    expect(answers).to.deep.equal(expected);
    // Read before the last record, 80 and 40 are 160 and 80: above a bound their undecayed values are within.
    expect([peaks.highestAbove('a', 100, 4_000), peaks.latelyAbove('a', 79, 4_000)]).to.deep.equal([true, true]);
    expect([peaks.leastIfWithin('b', 1e9), peaks.latelyAbove('b', 0), peaks.highestAbove('b', 0)]).to.deep.equal([undefined, false, false]);
  });

  it('decays each key by its own age and half-life when keys recorded at different times are asked in turn', () => {
    let clock = 0;
    const peaks = new PeakHistory(1_000, 10, () => clock);
    peaks.record('a', 400);
    clock = 1_000;
    peaks.record('b', 400);
    clock = 2_000;
    peaks.record('a', 1);
    peaks.record('b', 1);
    expect([peaks.peaks('a')?.highest, peaks.peaks('b')?.highest, peaks.peaks('a')?.highest]).to.deep.equal([100, 200, 100]);
    // The same age, another half-life.
    const slower = new PeakHistory(2_000, 10, () => clock);
    slower.record('a', 400, 1_000);
    expect([slower.peaks('a')?.highest, peaks.peaks('b', 3_000)?.highest]).to.deep.equal([400 * 2 ** -0.5, 100]);
  });

  it('records against a bound what record does for every question asked against it, over mixed short and long measurements', () => {
    const BOUND = 50;
    let clock = 1_000;
    const recorded = new PeakHistory(1_000, 3, () => clock);
    const against = new PeakHistory(1_000, 3, () => clock);
    // A fixed walk: short calls, a long one now and then, the clock on by 0-700 ms, four keys for three places.
    let seed = 7;
    const next = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const answers = (peaks: PeakHistory, key: string) => [
      peaks.leastIfWithin(key, BOUND),
      peaks.latelyAbove(key, BOUND),
      peaks.highestAbove(key, BOUND),
      peaks.size,
    ];
    for (let i = 0; i < 2_000; i++) {
      const key = `k${Math.floor(next() * 4)}`;
      const ms = next() < 0.05 ? BOUND + next() * 400 : next() * BOUND;
      clock += Math.floor(next() * 700);
      recorded.record(key, ms);
      against.recordAgainst(key, ms, BOUND);
      for (const asked of ['k0', 'k1', 'k2', 'k3'])
        expect(answers(against, asked), `step ${i}, ${asked}`).to.deep.equal(answers(recorded, asked));
    }
  });

  it('records against a bound in full what could answer otherwise: a new key, a new least, a measurement past it, a peak still past it', () => {
    let clock = 0;
    const peaks = new PeakHistory(1_000, 10, () => clock);
    peaks.recordAgainst('a', 20, 50);
    peaks.recordAgainst('a', 10, 50);
    peaks.recordAgainst('a', 30, 50);
    expect(peaks.peaks('a'), 'a new least is kept, 30 within the bound above both peaks is not').to.deep.equal({
      highest: 20,
      lately: 10,
      least: 10,
    });
    peaks.recordAgainst('a', 60, 50);
    peaks.recordAgainst('a', 5, 50);
    expect(peaks.peaks('a')).to.deep.equal({ highest: 60, lately: 20, least: 5 });
    clock = 1_000;
    peaks.recordAgainst('a', 25, 50);
    expect(peaks.peaks('a'), 'a peak past the bound when last written: recorded').to.deep.equal({ highest: 30, lately: 25, least: 5 });
  });
});
