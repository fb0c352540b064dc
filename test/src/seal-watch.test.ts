import { expect } from 'chai';
import { SealWatch } from '../../src/seal-watch.js';

const QUICK_MS = 50;

/**
 * A long call from `from` to `to` on an EL that sealed at `tick` meanwhile: a read that reached
 * it 4 ms before the tick answered in 1 ms, then nothing until the call ends, then the reads
 * held since 4 and 12 ms after the tick, answered 3 ms after the call.
 */
function sealDuring(watch: SealWatch, from: number, tick: number, to: number): void {
  watch.answered(1, tick - 3);
  watch.longEnded(from, to);
  for (const start of [tick + 4, tick + 12]) watch.answered(to + 3 - start, to + 3);
}

/**
 * Runs `episode` for two long calls across ticks at 1,000 and 2,000: from 600 and 1,600 (or
 * `lead` ms before the tick) to 1,400 and 2,400 (or `hold` ms after it).
 */
function twoCalls(episode: (from: number, tick: number, to: number) => void, lead = 400, hold = 400): void {
  for (const tick of [1_000, 2_000]) episode(tick - lead, tick, tick + hold);
}

/** A watch that has seen seals at 1,000 and 2,000 (calls of 800 ms each across them). */
function learnt(): SealWatch {
  const watch = new SealWatch(QUICK_MS);
  sealDuring(watch, 600, 1_000, 1_400);
  sealDuring(watch, 1_600, 2_000, 2_400);
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
    expect(watch.waitFor(500, 2_430)).to.equal(0);
    expect(watch.waitFor(800, 2_430)).to.equal(3_025 - 2_430);
    expect(watch.waitFor(100, 2_860)).to.equal(0);
    expect(watch.waitFor(100, 2_875)).to.equal(0);
    expect(watch.waitFor(100, 2_876)).to.equal(3_025 - 2_876);
    // Just after a tick, the seal may be under way; whole milliseconds only.
    expect(watch.waitFor(100, 3_010)).to.equal(25 - 10);
    expect(watch.waitFor(100, 3_024.9999999)).to.equal(1);
  });

  it('starts a call woken a little late after a tick, even one that would no longer fit before the next', () => {
    const watch = learnt();
    expect(watch.waitFor(949.5, 2_430)).to.equal(3_025 - 2_430);
    expect(watch.waitFor(949.5, 3_027)).to.equal(0);
    expect(watch.waitFor(949.5, 3_075)).to.equal(0);
    expect(watch.waitFor(949.5, 3_076)).to.equal(4_025 - 3_076);
  });

  it('waits for the seal the last long call may have held before it decides: the burst may tell the interval', () => {
    const watch = new SealWatch(QUICK_MS);
    sealDuring(watch, 600, 1_000, 1_400);
    watch.answered(1, 1_997);
    watch.longEnded(1_600, 2_400);
    expect(watch.waitFor(800, 2_401)).to.equal(25);
    // One held since 12 ms after the tick, then one since 4 ms after it: the earliest counts.
    watch.answered(2_403 - 2_012, 2_403);
    expect(watch.waitFor(800, 2_403)).to.equal(23);
    watch.answered(2_404 - 2_004, 2_404);
    expect(watch.waitFor(800, 2_425)).to.equal(1);
    // Seen: ticks at 1,000 and 2,000.
    expect(watch.waitFor(800, 2_426)).to.equal(3_025 - 2_426);
  });

  it('bounds a call to what fits between two ticks with a seal at each end: for a minute after the last seal, ten once two gaps agreed', () => {
    expect(new SealWatch(QUICK_MS).longestBetweenTicks(2_430)).to.equal(Number.POSITIVE_INFINITY);
    const once = new SealWatch(QUICK_MS);
    sealDuring(once, 600, 1_000, 1_400);
    expect(once.longestBetweenTicks(1_430)).to.equal(Number.POSITIVE_INFINITY);
    const watch = learnt();
    expect(watch.longestBetweenTicks(2_430)).to.equal(950);
    expect([watch.watching(62_000), watch.watching(62_001)]).to.deep.equal([true, false]);
    expect([watch.longestBetweenTicks(62_000), watch.longestBetweenTicks(62_001)]).to.deep.equal([950, Number.POSITIVE_INFINITY]);
    // Calls placed between ticks for a minute; bounded for ten (refused calls show no seal).
    const agreed = learnt();
    sealDuring(agreed, 2_600, 3_000, 3_400);
    expect([agreed.watching(63_000), agreed.watching(63_001)]).to.deep.equal([true, false]);
    expect(agreed.longestBetweenTicks(603_000)).to.equal(950);
    expect(agreed.longestBetweenTicks(603_001)).to.equal(Number.POSITIVE_INFINITY);
  });

  it('says a call running at a tick, 25 ms either side of it, held the seal, for as long as the interval bounds calls', () => {
    const watch = learnt();
    // Ticks at 1,000, 2,000, 3,000 ...
    expect(watch.heldTick(2_960, 3_800)).to.equal(true);
    expect(watch.heldTick(2_975, 3_025)).to.equal(true);
    expect(watch.heldTick(2_976, 3_800), 'reached the EL as it sealed: held by it').to.equal(false);
    expect(watch.heldTick(2_960, 3_024)).to.equal(false);
    expect(watch.heldTick(3_030, 3_900)).to.equal(false);
    expect(watch.heldTick(3_030, 4_100)).to.equal(true);
    expect([watch.heldTick(60_900, 62_000), watch.heldTick(60_900, 62_001)]).to.deep.equal([true, false]);
    sealDuring(watch, 2_600, 3_000, 3_400);
    expect([watch.heldTick(601_900, 603_000), watch.heldTick(601_900, 603_001)]).to.deep.equal([true, false]);
    expect(new SealWatch(QUICK_MS).heldTick(960, 1_800)).to.equal(false);
  });

  it('starts a call longer than the interval just after a tick', () => {
    const watch = learnt();
    expect(watch.waitFor(2_500, 2_430)).to.equal(3_025 - 2_430);
    expect(watch.waitFor(2_500, 3_050)).to.equal(0);
    expect(watch.waitFor(2_500, 3_100)).to.equal(4_025 - 3_100);
  });

  it('reads gaps as whole intervals; one well under the interval as the interval afresh; others teach it nothing', () => {
    const watch = new SealWatch(QUICK_MS);
    sealDuring(watch, 600, 1_000, 1_400);
    sealDuring(watch, 2_600, 3_000, 3_400);
    // Read as 2,000: the next tick at 5,000.
    expect(watch.waitFor(800, 3_500)).to.equal(0);
    expect(watch.waitFor(800, 4_300)).to.equal(5_025 - 4_300);
    sealDuring(watch, 4_600, 5_000, 5_400);
    sealDuring(watch, 5_600, 6_000, 6_400);
    sealDuring(watch, 7_600, 8_000, 8_400);
    // 2,000 again; then 1,000 (2,000 less one interval); then 2,000 read as two of them.
    expect(watch.waitFor(500, 8_430)).to.equal(0);
    expect(watch.waitFor(800, 8_430)).to.equal(9_025 - 8_430);
    sealDuring(watch, 10_600, 11_000, 11_400);
    sealDuring(watch, 12_100, 12_500, 12_900);
    // 3,000 as three; then 1,500, half-way: the interval stays, the ticks move.
    expect(watch.waitFor(400, 12_930)).to.equal(0);
    expect(watch.waitFor(600, 12_930)).to.equal(13_525 - 12_930);
  });

  it('takes a whole fraction of the interval once two gaps that were not whole intervals agree on it: seals seen only some ticks apart', () => {
    const watch = new SealWatch(QUICK_MS);
    // Ticks every 1,000 ms, seen only at 1,000, 6,000, 10,000, 15,000, 19,000 (one source's own 4.5 s calls).
    for (const tick of [1_000, 6_000, 10_000]) sealDuring(watch, tick - 400, tick, tick + 400);
    // 5,000, then 4,000: one fraction, the interval stays.
    expect(watch.longestBetweenTicks(10_430)).to.equal(4_950);
    sealDuring(watch, 14_600, 15_000, 15_400);
    expect(watch.longestBetweenTicks(15_430)).to.equal(4_950);
    sealDuring(watch, 18_600, 19_000, 19_400);
    expect(watch.longestBetweenTicks(19_430)).to.equal(950);
    expect(watch.waitFor(800, 19_430)).to.equal(20_025 - 19_430);
  });

  it('takes a long call that reached the EL after the tick and ended in the burst as a read the seal held: two heavy calls at once', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick, to) => {
      watch.answered(1, tick - 3);
      watch.longEnded(from, to);
      watch.longEnded(tick + 4, to + 2);
      watch.answered(to + 3 - (tick + 12), to + 3);
    });
    expect(watch.longestBetweenTicks(2_430)).to.equal(950);
  });

  it('sees no seal where the EL answered no read that came during the long call before it ended: one call at a time', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick, to) => {
      // Answered quickly during the call, but it had come before it.
      watch.answered(45, from + 40);
      watch.longEnded(from, to);
      watch.answered(to + 3 - (tick + 4), to + 3);
    });
    expect(watch.waitFor(800, 2_600)).to.equal(0);
  });

  it('sees no seal where the EL answered on after the tick: crowded, not sealing', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick, to) => {
      watch.answered(1, tick - 3);
      watch.answered(70, tick + 100);
      watch.longEnded(from, to);
      watch.answered(to + 3 - (tick + 4), to + 3);
    });
    expect(watch.waitFor(800, 2_600)).to.equal(0);
  });

  it('sees no seal that held the reads less than 100 ms: a slow read that ended with the call', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick, to) => sealDuring(watch, from, tick, to), 400, 99);
    expect(watch.waitFor(800, 2_200)).to.equal(0);
  });

  it('places no seal whose tick is known to no better than 50 ms: between the last quick read and the first held one', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick, to) => {
      watch.answered(1, tick - 47);
      watch.longEnded(from, to);
      watch.answered(to + 3 - (tick + 4), to + 3);
    });
    expect(watch.waitFor(800, 2_600)).to.equal(0);
    sealDuring(watch, 2_600, 3_000, 3_400);
    sealDuring(watch, 3_600, 4_000, 4_400);
    expect(watch.waitFor(800, 4_430)).to.equal(5_025 - 4_430);
  });

  it('counts only answers that came at once after the long call and reached the EL during it', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick, to) => {
      watch.answered(1, tick - 3);
      watch.longEnded(from, to);
      // One that reached the EL before the quick one; one 30 ms after the call's end.
      watch.answered(to + 3 - (tick - 10), to + 3);
      watch.answered(to + 30 - (tick + 4), to + 30);
    });
    expect(watch.waitFor(800, 2_600)).to.equal(0);
  });

  it('lets long calls start when they come once no seal was seen for a minute; a seal then keeps the interval only if whole intervals away', () => {
    const watch = learnt();
    expect(watch.waitFor(800, 61_900)).to.equal(62_025 - 61_900);
    expect(watch.waitFor(800, 62_000)).to.equal(25);
    expect(watch.waitFor(800, 62_001)).to.equal(0);
    sealDuring(watch, 89_600, 90_000, 90_400);
    expect(watch.waitFor(800, 90_430)).to.equal(91_025 - 90_430);
    sealDuring(watch, 149_850, 150_250, 150_650);
    expect(watch.waitFor(800, 150_700)).to.equal(0);
  });

  it('takes the running mean of the gaps read as whole intervals, of one or of several', () => {
    const watch = learnt();
    sealDuring(watch, 2_610, 3_010, 3_410);
    // 1,010: the interval 1,005 (the mean of two); the next tick at 4,015.
    expect(watch.waitFor(100, 3_890)).to.equal(0);
    expect(watch.waitFor(100, 3_891)).to.equal(4_040 - 3_891);
    sealDuring(watch, 4_630, 5_030, 5_430);
    // 2,020 as two of 1,010: the interval 1,006.67; the next tick at 6,036.67.
    expect(watch.waitFor(100, 5_911)).to.equal(0);
    expect(watch.waitFor(100, 5_912)).to.equal(Math.ceil(6_061.666 - 5_912));
  });

  it('reads a gap as whole intervals within 2% of the interval for each, and never a quarter of one', () => {
    const within = learnt();
    sealDuring(within, 11_750, 12_150, 12_550);
    // 10,150 as ten of 1,015: the interval 1,007.5; the next tick at 13,157.5.
    expect(within.waitFor(100, 13_032)).to.equal(0);
    expect(within.waitFor(100, 13_033)).to.equal(Math.ceil(13_182.5 - 13_033));
    const exactly = learnt();
    sealDuring(exactly, 2_650, 3_050, 3_450);
    // 1,050, 50 off: whole; the interval 1,025, the next tick at 4,075.
    expect(exactly.waitFor(100, 3_950)).to.equal(0);
    const beyond = learnt();
    sealDuring(beyond, 2_800, 3_200, 3_600);
    // 1,200: neither whole nor well under the interval; the ticks move to 3,200, the interval stays.
    expect(beyond.waitFor(100, 4_075)).to.equal(0);
    expect(beyond.waitFor(100, 4_076)).to.equal(4_225 - 4_076);
  });

  it('takes no gap under 200 ms for an interval: the same seal seen twice', () => {
    const watch = new SealWatch(QUICK_MS);
    sealDuring(watch, 600, 1_000, 1_400);
    sealDuring(watch, 1_100, 1_150, 1_300);
    expect(watch.waitFor(100, 1_400)).to.equal(0);
  });

  it('counts a seal at its bounds: held 100 ms, answered nothing from 25 ms after, placed within 50 ms, quick at 50 ms', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick) => {
      // Answered in exactly 50 ms, reached 46 ms before the first held read.
      watch.answered(QUICK_MS, tick + 8);
      watch.answered(60, tick + 29);
      watch.longEnded(from, tick + 104);
      watch.answered(tick + 107 - (tick + 4), tick + 107);
    });
    // Ticks seen at 981 and 1,981 (midway): the interval 1,000.
    expect(watch.waitFor(900, 2_130)).to.equal(3_006 - 2_130);
  });

  it('sees no seal where the quick read had reached the EL before the long call: one call at a time', () => {
    const watch = new SealWatch(QUICK_MS);
    twoCalls((from, tick, to) => {
      watch.answered(1, from - 4);
      watch.longEnded(from, to);
      watch.answered(to + 3 - (tick + 4), to + 3);
    }, 10);
    expect(watch.waitFor(800, 2_600)).to.equal(0);
  });
});
