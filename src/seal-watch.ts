/**
 * When a long call may start on an EL whose block seal waits for the calls running (anvil: its
 * miner takes the state's write lock at each tick of its block time, and every read of the state
 * queues behind it until the call running then has ended). Such an EL holds every source's reads
 * while one source's long call runs across a tick, whatever lane they are on; reth and geth read
 * state from snapshots and never do.
 *
 * It is read from the answers: when a long call ends and, at once, answers come that reached the
 * EL after it had answered another read quickly during that call, but waited longer than
 * `quickMs` themselves, while it answered nothing else from soon after the earliest of their
 * starts, the EL sealed a block meanwhile, at about that start. Two such seals give the block
 * interval. While a seal was seen in the last minute, a long call expected to run across the
 * next tick waits until just after it, unless it could not fit between two ticks anyway (then it
 * starts soon after one): the seal then finds nothing running.
 */

/** A seal counts answers that come this soon after the long call's end: the block is sealed at once. */
const BURST_MS = 25;
/** What a tick is known within (reads' gaps), and how long a seal takes: a long call keeps this clear of both sides. */
const MARGIN_MS = 25;
/** Seals are looked for this long after the last one seen; past it, long calls start when they come. */
const WATCH_MS = 60_000;
/** Gaps between seals shorter than this are the same seal seen twice. */
const LEAST_INTERVAL_MS = 200;
/** A gap under this share of the interval learned shows the interval was a multiple of the true one. */
const FRESH_SHARE = 0.75;
/** About how many gaps the interval is the mean of. */
const INTERVALS_MEAN = 8;

export class SealWatch {
  /** The last long call that ended: when it reached the EL and when it ended. */
  private longFrom = Number.NaN;
  private longTo = Number.NaN;
  /** When the EL last answered within `quickMs`. */
  private quickAt = Number.NEGATIVE_INFINITY;
  /** When the EL last answered anything, and, when the last long call ended, the answer before that. */
  private answerAt = Number.NEGATIVE_INFINITY;
  private quietFrom = Number.NEGATIVE_INFINITY;
  /** Whether the EL answered a read within `quickMs` while the last long call ran. */
  private servedDuring = false;
  /** The seal being read from the answers after `longTo`: the earliest start among them. */
  private burstTick = Number.NaN;
  /** The last seal's tick, and the block interval, once two seals were seen. */
  private tick = Number.NaN;
  private interval = Number.NaN;
  /** Gaps the interval is the mean of (up to INTERVALS_MEAN). */
  private intervals = 0;

  constructor(private readonly quickMs: number) {}

  /** A call on the heavy lane ended at `at`, having reached the EL at `from`. */
  longEnded(from: number, at: number): void {
    this.settleBurst();
    this.longFrom = from;
    this.longTo = at;
    this.quietFrom = this.answerAt;
    this.servedDuring = this.quickAt > from;
  }

  /** Any answer of the EL, `elMs` after it reached it, at `at`. */
  answered(elMs: number, at: number): void {
    const from = at - elMs;
    this.answerAt = at;
    if (elMs <= this.quickMs) {
      this.quickAt = at;
      return;
    }
    // Held by a seal: it came with the burst after the long call and reached the EL during it,
    // which the EL had quickly answered another read in (an EL that answers one call at a time
    // holds every read during a long call, tick or not).
    if (!(this.servedDuring && at - this.longTo <= BURST_MS && from >= this.longFrom && from < this.longTo)) return;
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
    if (at - this.longTo <= BURST_MS) return BURST_MS - (at - this.longTo) + 1;
    if (Number.isNaN(this.interval)) return 0;
    const since = (at - this.tick) % this.interval;
    // The seal may be under way.
    if (since < MARGIN_MS) return MARGIN_MS - since;
    const next = at - since + this.interval;
    if (at + expectedMs + MARGIN_MS <= next) return 0;
    // One that cannot fit between two ticks starts soon after one: it runs across the fewest.
    if (expectedMs + 2 * MARGIN_MS > this.interval && since <= this.interval / 4) return 0;
    return next + MARGIN_MS - at;
  }

  /**
   * Ticks seen apart are whole intervals apart: a gap is read as the whole number of intervals
   * nearest it, and the interval is their running mean (each tick is seen a little late, by a
   * varying amount). A gap well under the interval starts it afresh. A seal after a long quiet
   * only sets the ticks' phase again: long calls kept clear of the ticks leave no seal to see.
   */
  private learnInterval(gap: number): void {
    if (!(gap <= WATCH_MS) || gap < LEAST_INTERVAL_MS) return;
    if (!(gap >= this.interval * FRESH_SHARE)) {
      this.interval = gap;
      this.intervals = 1;
      return;
    }
    this.intervals = Math.min(this.intervals + 1, INTERVALS_MEAN);
    this.interval += (gap / Math.round(gap / this.interval) - this.interval) / this.intervals;
  }

  /** Takes the seal read from a burst once the burst is over (or a new long call ends). */
  private settleBurst(at = Number.POSITIVE_INFINITY): void {
    if (Number.isNaN(this.burstTick) || at - this.longTo <= BURST_MS) return;
    // A seal holds every read: the EL answered nothing from soon after the tick to the call's end
    // (an EL merely crowded answers on).
    if (this.quietFrom > this.burstTick + MARGIN_MS) {
      this.burstTick = Number.NaN;
      return;
    }
    const gap = this.burstTick - this.tick;
    this.learnInterval(gap);
    this.tick = this.burstTick;
    this.burstTick = Number.NaN;
  }
}
