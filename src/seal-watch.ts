/**
 * When a long call may start on an EL whose block seal waits for the calls running (anvil: its
 * miner takes the state's write lock at each tick of its block time, and every read of the state
 * queues behind it until the call running then has ended). Such an EL holds every source's reads
 * while one source's long call runs across a tick, whatever lane they are on; reth and geth read
 * state from snapshots and never do.
 *
 * It is read from the answers: when a long call ends and, at once, answers come that waited
 * longer than `quickMs`, having reached the EL during the call after a read that reached it then
 * was answered quickly, while it answered nothing else for LEAST_HOLD_MS or more, the EL sealed a
 * block between those two starts (counted only where they are close enough to place it). Two
 * such seals give the block interval. While a seal was seen in the last minute, a long call
 * expected to run across the next tick waits until just after it: the seal then finds nothing
 * running. An EL that answers one call at a time, or answers on when crowded, shows no seal.
 */

/** A seal counts answers that come this soon after the long call's end: the block is sealed at once. */
const BURST_MS = 25;
/** How long a seal takes after its tick: a long call starts no sooner, and ends this much before the next. */
const MARGIN_MS = 25;
/** A call may start this long after a tick at most to count as started just after it (a timer may fire late). */
const START_WINDOW_MS = 3 * MARGIN_MS;
/** A seal counts only if it held the reads this long at least (the EL answering nothing meanwhile). */
const LEAST_HOLD_MS = 100;
/** Seals are looked for this long after the last one seen; past it, long calls start when they come. */
const WATCH_MS = 60_000;
/**
 * An interval learned from two gaps or more bounds a call's length this long after the last seal
 * seen (one from a single gap, for WATCH_MS): once calls too long to fit between two ticks are
 * refused, none holds a seal to be seen. Seals forged on an EL that never seals bound calls as
 * long, at most: three, placed to agree.
 */
const BOUND_MS = 600_000;
/** Gaps between seals shorter than this are the same seal seen twice. */
const LEAST_INTERVAL_MS = 200;
/** A gap under this share of the interval learned shows the interval was a multiple of the true one. */
const FRESH_SHARE = 0.75;
/** A gap this far from a whole number of intervals at most is read as one. */
const GAP_TOLERANCE_MS = 50;
/** How far off the interval learned may be, as a share of it, for a gap to be read as whole intervals. */
const DRIFT_SHARE = 0.02;
/** An interval learned is looked at as at most this many times the true one. */
const MOST_PARTS = 8;
/** About how many gaps the interval is the mean of. */
const INTERVALS_MEAN = 8;

export class SealWatch {
  /** When the last long call had reached the EL, and when it ended. */
  private longFrom = Number.NaN;
  private longTo = Number.NaN;
  /** When the last answer within `quickMs` had reached the EL. */
  private quickFrom = Number.NEGATIVE_INFINITY;
  /** When the EL last answered anything, and, when the last long call ended, the answer before that. */
  private answerAt = Number.NEGATIVE_INFINITY;
  private quietFrom = Number.NEGATIVE_INFINITY;
  /**
   * When the last long call ended: when the last read the EL answered quickly before then had
   * reached it, if during the call (a tick it sealed at came later); else NaN, the EL having
   * answered no read that came during the call before it ended (one call at a time).
   */
  private servedFrom = Number.NaN;
  /** The seal being read from the answers after `longTo`: the earliest start among them. */
  private burstTick = Number.NaN;
  /** The last seal's tick, and the block interval, once two seals were seen. */
  private tick = Number.NaN;
  private interval = Number.NaN;
  /** Gaps the interval is the mean of (up to INTERVALS_MEAN). */
  private intervals = 0;
  /** A whole fraction of the interval a gap that was not whole intervals fitted: the interval once another does. */
  private divisor = Number.NaN;

  constructor(private readonly quickMs: number) {}

  /**
   * A call on the heavy lane ended at `at`, having reached the EL at `from`. One that reached it
   * after the last long call did and ended in that one's burst was held by its seal, as a read.
   */
  longEnded(from: number, at: number): void {
    if (at - this.longTo <= BURST_MS && from > this.longFrom) return this.answered(at - from, at);
    this.settleBurst();
    this.longFrom = from;
    this.longTo = at;
    this.quietFrom = this.answerAt;
    this.servedFrom = this.quickFrom > from ? this.quickFrom : Number.NaN;
  }

  /** Any answer of the EL, `elMs` after it reached it, at `at`. */
  answered(elMs: number, at: number): void {
    const from = at - elMs;
    this.answerAt = at;
    if (elMs <= this.quickMs) {
      this.quickFrom = from;
      return;
    }
    // Held by a seal: it came with the burst after the long call and reached the EL during it,
    // after a read the EL answered quickly meanwhile.
    if (!(at - this.longTo <= BURST_MS && from > this.servedFrom && from < this.longTo)) return;
    if (!(from >= this.burstTick)) this.burstTick = from;
  }

  /**
   * How long a call expected to take `expectedMs` waits before it starts, at `at`: 0 to start at
   * once; else until just after a tick.
   */
  waitFor(expectedMs: number, at: number): number {
    this.settleBurst(at);
    if (!(at - this.tick <= WATCH_MS)) return 0;
    // A seal the last long call held may still be coming in: it may tell the interval.
    if (at - this.longTo <= BURST_MS) return Math.ceil(BURST_MS - (at - this.longTo)) + 1;
    if (Number.isNaN(this.interval)) return 0;
    const since = (at - this.tick) % this.interval;
    // The seal may be under way.
    if (since < MARGIN_MS) return Math.ceil(MARGIN_MS - since);
    const next = at - since + this.interval;
    // It ends before the next tick; or it starts just after one (woken a little late, it may no
    // longer fit before the next: then nothing fits better).
    if (at + expectedMs + MARGIN_MS <= next || since <= START_WINDOW_MS) return 0;
    return Math.ceil(next + MARGIN_MS - at);
  }

  /**
   * The longest call that can run between two ticks, at `at`, leaving both seals free: while
   * seals are watched and the interval is known, the interval less a seal's margin at each end;
   * else unbounded. A longer call holds a seal wherever it starts.
   */
  longestBetweenTicks(at: number): number {
    this.settleBurst(at);
    if (!(at - this.tick <= this.boundFor()) || Number.isNaN(this.interval)) return Number.POSITIVE_INFINITY;
    return this.interval - 2 * MARGIN_MS;
  }

  /** Whether seals were seen lately: long calls are placed between ticks, one at a time. */
  watching(at: number): boolean {
    this.settleBurst(at);
    return at - this.tick <= WATCH_MS;
  }

  /**
   * Whether a call that reached the EL at `from` and ended at `to` was running at a tick of the
   * interval learned (from MARGIN_MS before it to MARGIN_MS after it at least): the seal waited
   * for it, and the reads it held were held by it, not it by them.
   */
  heldTick(from: number, to: number): boolean {
    this.settleBurst(to);
    if (Number.isNaN(this.interval) || !(to - this.tick <= this.boundFor())) return false;
    const tick = this.tick + Math.ceil((from + MARGIN_MS - this.tick) / this.interval) * this.interval;
    return tick + MARGIN_MS <= to;
  }

  /** How long after the last seal the interval bounds calls: longer once more than one gap agreed. */
  private boundFor(): number {
    return this.intervals >= 2 ? BOUND_MS : WATCH_MS;
  }

  /**
   * Ticks seen apart are whole intervals apart: a gap within GAP_TOLERANCE_MS of a whole number
   * of intervals is read as that many, and the interval is their running mean (ticks are seen
   * within a few milliseconds). A gap well under the interval shows it was a multiple of the
   * true one: the gap is the interval afresh. Other gaps teach nothing. A seal after a long quiet
   * keeps the interval only if it is still a whole number of them away.
   */
  private learnInterval(gap: number): void {
    if (!(gap >= LEAST_INTERVAL_MS)) return;
    const intervals = Math.round(gap / this.interval);
    const rest = Math.abs(gap - intervals * this.interval);
    // Each interval learned may be off by a little: over many, that adds up.
    const whole = rest <= Math.max(GAP_TOLERANCE_MS, intervals * this.interval * DRIFT_SHARE) && rest < this.interval / 4;
    if (gap > WATCH_MS) {
      if (!whole) this.interval = Number.NaN;
      return;
    }
    if (intervals >= 1 && whole) {
      this.intervals = Math.min(this.intervals + 1, INTERVALS_MEAN);
      // Never under the least gap taken: a run of gaps a little short of whole must not wear it away.
      this.interval = Math.max(LEAST_INTERVAL_MS, this.interval + (gap / intervals - this.interval) / this.intervals);
    } else if (!(gap >= this.interval * FRESH_SHARE)) {
      this.interval = gap;
      this.intervals = 1;
      this.divisor = Number.NaN;
    } else {
      // Neither: the interval learned may be a multiple of the true one (seals seen only some
      // intervals apart, as one source's own long calls show them). Taken once two gaps agree.
      const divisor = this.divisorFitting(gap);
      if (Math.abs(divisor - this.divisor) <= GAP_TOLERANCE_MS) {
        this.interval = divisor;
        this.intervals = 1;
        this.divisor = Number.NaN;
      } else this.divisor = divisor;
    }
  }

  /** The largest whole fraction of the interval (at least LEAST_INTERVAL_MS) that `gap` is a whole number of; NaN if none. */
  private divisorFitting(gap: number): number {
    for (let parts = 2; parts <= MOST_PARTS; parts++) {
      const divisor = this.interval / parts;
      if (divisor < LEAST_INTERVAL_MS) break;
      if (Math.abs(gap - Math.round(gap / divisor) * divisor) <= GAP_TOLERANCE_MS) return divisor;
    }
    return Number.NaN;
  }

  /** Takes the seal read from a burst once the burst is over (or a new long call ends). */
  private settleBurst(at = Number.POSITIVE_INFINITY): void {
    if (Number.isNaN(this.burstTick) || at - this.longTo <= BURST_MS) return;
    const held = this.burstTick;
    this.burstTick = Number.NaN;
    // A seal holds every read: the EL answered nothing from soon after the tick to the call's
    // end, a while (an EL merely crowded answers on, or soon).
    if (this.quietFrom > held + MARGIN_MS || this.longTo - held < LEAST_HOLD_MS) return;
    // The tick came after the last read answered quickly had reached the EL, and before the
    // first held one did: a seal is placed only where that is known within MARGIN_MS.
    if (held - this.servedFrom > 2 * MARGIN_MS) return;
    const tick = (this.servedFrom + held) / 2;
    this.learnInterval(tick - this.tick);
    this.tick = tick;
  }
}
