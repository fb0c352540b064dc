import { expect } from 'chai';
import { SealWatch } from '../../src/seal-watch.js';

const QUICK_MS = 50;

/**
 * A long call from `from` to `to` on an EL that sealed at `tick` meanwhile: a read answered in
 * 1 ms before the tick, then nothing until the call ends, then the reads held from just after
 * the tick, answered 3 ms after it.
 */
function sealDuring(watch: SealWatch, from: number, tick: number, to: number): void {
  watch.answered(1, tick - 10);
  watch.longEnded(from, to);
  for (const start of [tick + 4, tick + 12]) watch.answered(to + 3 - start, to + 3);
}

/** A watch that has seen seals at 1,000 and 2,000 (calls of 800 ms each across them). */
function learnt(): SealWatch {
  const watch = new SealWatch(QUICK_MS);
  sealDuring(watch, 600, 996, 1_400);
  sealDuring(watch, 1_600, 1_996, 2_400);
  return watch;
}

describe('seal watch: long calls kept clear of the ticks of an EL that seals under a lock', () => {
  it('lets every call start at once on an EL never seen holding reads at a seal (reth, geth)', () => {
    const watch = new SealWatch(QUICK_MS);
    watch.answered(1, 500);
    watch.longEnded(100, 900);
    watch.answered(2, 902);
    expect(watch.waitFor(800, 903)).to.equal(0);
    expect(watch.waitFor(800, 1_500)).to.equal(0);
  });

  it('starts a long call only where it ends before the next tick, else just after that tick', () => {
    const watch = learnt();
    // Ticks seen at 1,000 and 2,000 (each 4 ms late): the next at ~3,000.
    expect(watch.waitFor(500, 2_430)).to.equal(0);
    expect(watch.waitFor(800, 2_430)).to.equal(3_025 - 2_430);
    expect(watch.waitFor(100, 2_860)).to.equal(0);
    expect(watch.waitFor(100, 2_880)).to.equal(3_025 - 2_880);
    // Just after a tick, the seal may be under way.
    expect(watch.waitFor(100, 3_010)).to.equal(25 - 10);
  });

  it('waits for the seal the last long call may have held before it decides: the burst may tell the interval', () => {
    const watch = new SealWatch(QUICK_MS);
    sealDuring(watch, 600, 996, 1_400);
    watch.answered(1, 1_990);
    watch.longEnded(1_600, 2_400);
    expect(watch.waitFor(800, 2_401)).to.equal(25);
    watch.answered(2_403 - 2_000, 2_403);
    // Seen: ticks at 1,000 and 2,000.
    expect(watch.waitFor(800, 2_426)).to.equal(3_025 - 2_426);
  });

  it('starts a call longer than the interval within a quarter of it after a tick, else after the next', () => {
    const watch = learnt();
    expect(watch.waitFor(2_500, 2_430)).to.equal(3_025 - 2_430);
    expect(watch.waitFor(2_500, 3_100)).to.equal(0);
    expect(watch.waitFor(2_500, 3_300)).to.equal(4_025 - 3_300);
  });

  it('takes the interval from ticks seen two intervals apart, and from one seen one apart after them', () => {
    const watch = new SealWatch(QUICK_MS);
    sealDuring(watch, 600, 996, 1_400);
    sealDuring(watch, 2_600, 2_996, 3_400);
    // Read as 2,000: the next tick at ~5,000.
    expect(watch.waitFor(800, 3_500)).to.equal(0);
    expect(watch.waitFor(800, 4_300)).to.equal(5_025 - 4_300);
    sealDuring(watch, 4_600, 4_996, 5_400);
    sealDuring(watch, 5_600, 5_996, 6_400);
    sealDuring(watch, 7_600, 7_996, 8_400);
    // 2,000 again; then 1,000; then a gap of 2,000 read as two of them.
    expect(watch.waitFor(500, 8_430)).to.equal(0);
    expect(watch.waitFor(800, 8_430)).to.equal(9_025 - 8_430);
  });

  it('sees no seal where the EL answered no read quickly during the long call: one call at a time holds every read', () => {
    const watch = new SealWatch(QUICK_MS);
    for (const [from, tick, to] of [
      [600, 996, 1_400],
      [1_600, 1_996, 2_400],
    ]) {
      watch.longEnded(from!, to!);
      watch.answered(to! + 3 - (tick! + 4), to! + 3);
    }
    expect(watch.waitFor(800, 2_600)).to.equal(0);
  });

  it('sees no seal where the EL answered on after the tick: crowded, not sealing', () => {
    const watch = new SealWatch(QUICK_MS);
    for (const [from, tick, to] of [
      [600, 996, 1_400],
      [1_600, 1_996, 2_400],
    ]) {
      watch.answered(1, tick! - 10);
      watch.answered(70, tick! + 100);
      watch.longEnded(from!, to!);
      watch.answered(to! + 3 - (tick! + 4), to! + 3);
    }
    expect(watch.waitFor(800, 2_600)).to.equal(0);
  });

  it('counts only answers that came at once after the long call and reached the EL during it', () => {
    const watch = new SealWatch(QUICK_MS);
    for (const [from, tick, to] of [
      [600, 996, 1_400],
      [1_600, 1_996, 2_400],
    ]) {
      watch.answered(1, tick! - 10);
      watch.longEnded(from!, to!);
      // 30 ms after the call's end; and one that reached the EL before the call.
      watch.answered(to! + 3 - (from! - 5), to! + 3);
      watch.answered(to! + 30 - (tick! + 4), to! + 30);
    }
    expect(watch.waitFor(800, 2_600)).to.equal(0);
  });

  it('lets long calls start when they come once no seal was seen for a minute; one seal then sets the ticks again', () => {
    const watch = learnt();
    expect(watch.waitFor(800, 61_900)).to.equal(62_025 - 61_900);
    expect(watch.waitFor(800, 62_200)).to.equal(0);
    sealDuring(watch, 90_100, 90_496, 90_900);
    expect(watch.waitFor(800, 90_930)).to.equal(91_525 - 90_930);
  });
});
