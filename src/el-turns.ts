/**
 * Turns on the EL for the gas-heavy reads (eth_call, eth_estimateGas, eth_createAccessList,
 * eth_simulateV1), shared by the EL time each source measurably used.
 *
 * Two lanes of connections kept for them: `heavy` runs any call, `quick` only calls expected to
 * be short, so that a dapp's read or a wallet's estimate never waits behind a large call. The
 * quick lane runs calls that may take up to `quickMs` while the EL time expected of them fits
 * in its budget (`quick` calls of `quickMs`: one at a time by default), and tiny ones (expected
 * within a tenth of `quickMs`: most views, a wallet's estimate) beside them, as many at once as
 * its limit allows. The limit follows what the tiny ones do, as a congestion window does: it
 * halves each time one of them, learned by its target, takes longer than `quickMs` (a
 * calldata-dependent target turned dear: a multicall), and grows back by one per window of
 * calls that kept the promise, so that a run of mispredicted calls soon runs one at a time.
 * Expected
 * short: its calls ask for at most `quickGas` (what bounds their time on the EL, whoever sends
 * them); or, asking for more (a call naming no gas asks for the EL's cap: most dapp reads and
 * every wallet's estimate), its target (method, contract, selector, block: call-gas.ts) has been
 * measured within `quickMs`, and lately no more than once beyond it, and so have its source's
 * such calls on the quick lane (PeakHistory: one call that waited on a busy EL is forgiven, a
 * second is not). A gasless balanceOf runs on the quick lane once one has been measured short,
 * from anyone; calls that take longer than their target promised mark their source, which stays
 * out of the quick lane while the mark fades, and the target only once two sources' calls did:
 * a target's cost can hang on its calldata past the selector (a multicall, a router), and one
 * source's dear calls to it must not send everyone's cheap ones to wait behind large calls. A
 * source counts once a target until its own long call on it fades. Only calls asking for more than
 * `quickGas` teach a target: a small call's time says nothing of what a large one to the same
 * code can do. A call that took longer than `quickMs` marks only if the EL answered another read
 * within `quickMs` meanwhile (`answered`): an EL that seals blocks under a write lock (anvil)
 * holds every read while a long call keeps the lock, and a call held so waited, whatever its own
 * time; an EL answering others quickly all along was not holding it. Nor does it mark if reads
 * answered within `quickMs` lately took an eighth of its time or more, as a crowded EL makes them
 * (a busy node, another proxy, this one's own loop behind): every call is slower then, the cheap
 * ones too, and sending them to the heavy lane, one at a time, would leave the EL idle while
 * clients wait. On an EL seen holding every read while it seals a block under a lock (anvil), a
 * call on the heavy lane starts only where it leaves the next seal free (seal-watch.ts).
 *
 * One call's EL time is bounded: a call its source's recent long calls, at their EL time per
 * unit of gas, say would take longer than `callMs` (or, on an EL that seals under a lock, longer
 * than fits between two ticks) is refused when it comes and again when its turn comes, unless
 * its gas is within `quickGas` or the source's own calls to its target were short. The EL
 * computes on whatever its client does (anvil does not stop a call whose connection closed), so
 * only a call never sent is bounded. A source's cost per gas is learned from the own work
 * (`ownMs`) of its calls longer than `quickMs` (the second dearest lately, halving each minute;
 * searches, which the EL runs many times, apart): its first two dear calls run, and it then runs
 * such calls again only with less gas, or once what it showed has faded. A call running at a tick
 * of such an EL held the seal, and every read behind it: it was not held, and its time is its
 * own. While seals are seen, the heavy lane runs one call at a time, each planned by the longer
 * of its source's last and its cost (a source with no heavy call yet, by the dearest cost seen).
 *
 * In each lane, waiting sources are served by start-time fair queueing on measured
 * milliseconds: a source's next call starts at the later of the current virtual time and the
 * end of its last, which the EL time that call took pushes on. A source whose calls take a
 * second each gets a second of virtual time per call, one whose calls take 2 ms gets 2 ms: while
 * both wait, the second is served about 500 times as often, and a source that used nothing
 * lately is served first. Within a source, first come first served.
 */
import { PeakHistory } from './peak-history.js';
import { SealWatch } from './seal-watch.js';

export type Lane = 'quick' | 'heavy';

export interface ElTurn {
  readonly source: string;
  /** What call-gas.ts names the call's target, if it has one that can be learned. */
  readonly target: string | undefined;
  /** The gas its calls ask for in all, a call naming none counted at the cap, times the runs its method makes (call-gas.ts). */
  readonly gas: bigint;
  /** Whether the EL runs it many times (an estimate, an access list): its cost is learned apart. */
  readonly searches?: boolean;
  /** True once nobody waits for the answer: a turn not started yet is then dropped. */
  readonly gone: () => boolean;
  /** Runs the call on `lane`; `ended` is called once it is over, with the EL time it took. */
  start(lane: Lane, ended: (elMs: number) => void): void;
  /** Told instead of `start` when the turn was dropped. */
  dropped(): void;
  /** Told instead of `start` (at once, never queued) when the call is expected to take longer than one call may. */
  refused(refusal: CallRefusal): void;
}

/** Why a call was refused: what its source's recent calls say it would take, and what one call may. */
export interface CallRefusal {
  readonly expectedMs: number;
  readonly mostMs: number;
  /** When the source's cost per gas will have faded enough for this call to run. */
  readonly retryAfterMs: number;
}

export interface ElLanes {
  /** Calls running at once on the heavy lane. */
  readonly heavy: number;
  /**
   * The quick lane's EL time in flight, in calls of `quickMs`: it runs calls while the EL time
   * expected of those running, tiny ones aside, stays within `quick` x `quickMs` (0: no quick lane).
   */
  readonly quick: number;
  /** The most calls running at once on the quick lane, tiny ones included: its limit's ceiling. */
  readonly quickMost: number;
  /** The most gas a call may ask for and be sent to the quick lane unmeasured. */
  readonly quickGas: bigint;
  /** A target (or a source's call on one) measured longer than this lately is kept out of the quick lane. */
  readonly quickMs: number;
  /** The EL time one call may be expected to take at most (by its source's recent calls). */
  readonly callMs: number;
}

/** How fast a long call's mark fades: 1 s is forgotten by a 50 ms bound in ~22 s. */
const PEAK_HALF_LIFE_MS = 5_000;
/** Sources and targets remembered (each a few dozen bytes). */
const PEAK_KEYS = 100_000;
/** What a call is charged when it starts, until its EL time is known. */
const PROVISIONAL_MS = 1;
const pairOf = (source: string, target: string) => `${source}\n${target}`;
/** Whether `line`'s next call starts before `other`'s: by start tag, then by which had a call waiting first. */
const earlier = (line: Line, other: Line) =>
  line.finish < other.finish || (line.finish === other.finish && line.readySince < other.readySince);
/** A quick call expected within this share of `quickMs` is tiny: it runs beside the others. */
const TINY_SHARE = 10;
/** Sources whose virtual time is kept while they are idle; past it the idle ones are forgotten. */
const MAX_LINES = 10_000;
/** A call is long, for the quick lane, only at more than this many times the EL's typical answer lately. */
const LONG_SHARE = 8;
/** About how many answers the typical answer follows (the weight of each in the running mean). */
const TYPICAL_ANSWERS = 32;
/** What a source's next call on the heavy lane is expected to take: its last, or this share of what was expected of that one. */
const HEAVY_MS_FADE = 0.9;
/** How fast a source's EL time per gas fades: a call 4.7 times too long runs again after ~2 minutes. */
const COST_HALF_LIFE_MS = 60_000;
/** Where the dearest cost per gas of any source is kept: what a source with no heavy call yet is planned by, between ticks. */
const DEAREST = '';
/** What a source's calls of a kind are learned under. */
const costKey = (turn: ElTurn) => (turn.searches === true ? `${turn.source}\nsearches` : turn.source);
/** An answer quicker than this counts as this (log2 of 0 is not a number). */
const LEAST_TYPICAL_MS = 0.1;

interface Line {
  /** Virtual time at which this source's next call may start. */
  finish: number;
  readonly waiting: Waiting[];
  running: number;
  /** Its place in `ready` while it has a call waiting, else -1. */
  slot: number;
  /** When it last came to have a call waiting (a count): ties go to the earliest. */
  readySince: number;
  /** What its last call on the heavy lane took (0: none yet): what its next is expected to take. */
  heavyMs: number;
}

/** A call waiting, with its key in `pairs` made once (a key built anew is hashed anew at each look). */
interface Waiting {
  readonly turn: ElTurn;
  readonly pair: string | undefined;
}

/** What the quick lane expects of a call: its EL time, and whether that is the target's (a probe). */
interface QuickExpectation {
  readonly ms: number;
  readonly probe: boolean;
}

export class ElTurns {
  private virtual = 0;
  /**
   * Every source seen, idle ones too until MAX_LINES (forgetIdle): a Map that gains and loses an
   * entry per call costs V8 a new table every few calls once it is old, ~1 µs a call.
   */
  private readonly lines = new Map<string, Line>();
  /** Lines with a call waiting, in no order (`readySince` orders ties); an array, for the same reason as `lines`. */
  private readonly ready: Array<Line | undefined> = [];
  private readyCount = 0;
  private readySeq = 0;
  private readonly running: Record<Lane, number> = { quick: 0, heavy: 0 };
  /** The EL time expected of the calls running on the quick lane, tiny ones aside, in all. */
  private quickLoad = 0;
  /** Tiny calls running on the quick lane. */
  private tinyRunning = 0;
  /** Targets with a quick call running on the target's measurements, not its source's (quick()). */
  private readonly probing = new Set<string>();
  /**
   * Calls running at once on the quick lane at most, now (between 1 and `quickMost`): from one,
   * grown by the tiny calls that keep their promise, so that a burst of calls that break it runs
   * on a limit they have not earned.
   */
  private quickLimit: number;
  private waiting = 0;
  private readonly sources: PeakHistory;
  private readonly targets: PeakHistory;
  /** Per source and target: whether the source's long call on the target counted there lately. */
  private readonly pairs: PeakHistory;
  /** Per source (its searches apart), and of all under DEAREST: the EL milliseconds per gas its long calls took. */
  private readonly costs: PeakHistory;
  /**
   * When the last long call ended, its source, and when the EL had last answered a read quickly
   * then; the same of the last long call of another source.
   */
  private lastLongAt = Number.NEGATIVE_INFINITY;
  private lastLongSource = '';
  private lastLongQuick = Number.NEGATIVE_INFINITY;
  private otherLongAt = Number.NEGATIVE_INFINITY;
  private otherLongQuick = Number.NEGATIVE_INFINITY;
  /** When the EL last answered a read within `quickMs`: it was not holding reads then. */
  private lastResponsive = Number.NEGATIVE_INFINITY;
  /**
   * What the EL's answers within `quickMs` took lately, typically: a running mean of their log2
   * ms, by answer. Longer ones are left out: a crowd of calls kept long (many sources' calls at
   * once) would otherwise raise the bar they are themselves judged against. It starts at half
   * `quickMs` (long calls up to 4 times it spared): a restart under load knows nothing yet, and
   * a few dozen answers within `quickMs` bring it to what the EL does.
   */
  private typicalLog2: number;

  /** When a long call may start on an EL that seals blocks under a lock (seal-watch.ts). */
  private seals: SealWatch;
  /** When the pump set to start a call that waited for a seal will run, if one is set. */
  private pumpAt = Number.POSITIVE_INFINITY;

  constructor(
    private lanes: ElLanes,
    private readonly now: () => number = () => performance.now(),
    /** Runs `run` in `ms` (this clock's); not keeping the process alive. */
    private readonly later: (run: () => void, ms: number) => void = (run, ms) => void setTimeout(run, ms).unref(),
  ) {
    this.seals = new SealWatch(lanes.quickMs);
    this.sources = new PeakHistory(PEAK_HALF_LIFE_MS, PEAK_KEYS, now);
    this.targets = new PeakHistory(PEAK_HALF_LIFE_MS, PEAK_KEYS, now);
    this.pairs = new PeakHistory(PEAK_HALF_LIFE_MS, PEAK_KEYS, now);
    this.costs = new PeakHistory(COST_HALF_LIFE_MS, PEAK_KEYS, now);
    this.quickLimit = 1;
    this.typicalLog2 = Math.log2(lanes.quickMs / 2);
  }

  /**
   * A reload's lanes: the calls running go on (on the pools they started on) and count against
   * the new numbers, so the EL never has more than the larger of the two at once.
   */
  resize(lanes: ElLanes): void {
    if (lanes.quickMs !== this.lanes.quickMs) this.seals = new SealWatch(lanes.quickMs);
    this.lanes = lanes;
    this.quickLimit = Math.min(this.quickLimit, Math.max(1, lanes.quickMost));
    this.pump(this.now());
  }

  /** Calls waiting for their turn (for tests and metrics). */
  get queued(): number {
    return this.waiting;
  }

  /** Another read answered in `elMs`: one within `quickMs` shows the EL was serving reads then. */
  answered(elMs: number): void {
    const at = this.now();
    this.seals.answered(elMs, at);
    this.answeredAt(elMs, at);
  }

  private answeredAt(elMs: number, at: number): void {
    if (elMs > this.lanes.quickMs) return;
    this.lastResponsive = at;
    this.typicalLog2 += (Math.log2(Math.max(elMs, LEAST_TYPICAL_MS)) - this.typicalLog2) / TYPICAL_ANSWERS;
  }

  /**
   * The part of the EL time of a call that reached the EL at `startedAt` (this clock) and was
   * answered `elMs` later, at `at`, that was its own work. A long call during which another
   * `source`'s long call ended, the EL having answered no read quickly from soon after it had the
   * call to that end, waited behind that one (held at a seal the other kept): its own is what came
   * after. A long call during which the EL answered no other read quickly at all may have been
   * held throughout (anvil sealing a block holds every read): none of it, unless it was running
   * at one of the EL's ticks (the seal waited for it). Else all of it.
   */
  ownMs(startedAt: number, elMs: number, source?: string, at = this.now()): number {
    const { quickMs } = this.lanes;
    if (!(elMs > quickMs)) return elMs;
    if (source !== undefined) {
      const mine = this.lastLongSource === source;
      const otherEnd = mine ? this.otherLongAt : this.lastLongAt;
      const quickBefore = mine ? this.otherLongQuick : this.lastLongQuick;
      if (otherEnd > startedAt && quickBefore <= startedAt + quickMs) return Math.max(0, at - otherEnd);
    }
    if (this.lastResponsive <= startedAt + quickMs && !this.seals.heldTick(startedAt, startedAt + elMs)) return 0;
    return elMs;
  }

  /** Whether a long call may have been held by the EL: its own work (ownMs) was no longer than a quick call's. */
  held(startedAt: number, elMs: number, source?: string, at = this.now()): boolean {
    return elMs > this.lanes.quickMs && this.ownMs(startedAt, elMs, source, at) <= this.lanes.quickMs;
  }

  /**
   * Whether a long call's time says nothing of its own cost: held, or no more than `LONG_SHARE`
   * times what the EL's answers within `quickMs` typically took lately (a crowded EL slows every
   * call alike). Counted by answer, a dear call stands out of others' cheap ones however many
   * dear ones a source sends.
   */
  private crowded(startedAt: number, elMs: number, source: string, at: number): boolean {
    return this.held(startedAt, elMs, source, at) || (elMs > this.lanes.quickMs && this.asCrowdedMakes(elMs));
  }

  /** Whether `ms` is within what a crowded EL makes of any call: LONG_SHARE times its typical answer lately. */
  private asCrowdedMakes(ms: number): boolean {
    return ms <= LONG_SHARE * 2 ** this.typicalLog2;
  }

  /** Sources whose virtual time counts: with calls waiting or running, or owed time ahead of the clock (a count, for metrics). */
  get remembered(): number {
    let counted = 0;
    for (const line of this.lines.values()) if (!this.forgotten(line)) counted++;
    return counted;
  }

  /** Calls running on `lane` now. */
  runningOn(lane: Lane): number {
    return this.running[lane];
  }

  take(turn: ElTurn): void {
    const at = this.now();
    const waiting: Waiting = { turn, pair: turn.target === undefined ? undefined : pairOf(turn.source, turn.target) };
    const refusal = this.overlong(waiting, at);
    if (refusal !== undefined) return turn.refused(refusal);
    let line = this.lines.get(turn.source);
    if (line === undefined) {
      if (this.lines.size >= MAX_LINES) this.forgetIdle();
      line = { finish: this.virtual, waiting: [], running: 0, slot: -1, readySince: 0, heavyMs: 0 };
      this.lines.set(turn.source, line);
    } else if (this.forgotten(line)) {
      // Kept idle, it starts where a new line would.
      line.finish = this.virtual;
    }
    line.waiting.push(waiting);
    this.waiting++;
    if (line.slot < 0) {
      line.slot = this.readyCount;
      line.readySince = ++this.readySeq;
      this.ready[this.readyCount++] = line;
    }
    this.pump(at);
  }

  /**
   * Why a call may not run: its source's cost per gas lately, times its gas, is over what one call
   * may take (`callMs`, or between two ticks of an EL that seals under a lock). A call within
   * `quickGas` runs, as does one to a target the source's own calls kept short.
   */
  private overlong(waiting: Waiting, at: number): CallRefusal | undefined {
    const { turn } = waiting;
    if (turn.gas <= this.lanes.quickGas) return undefined;
    const mostMs = Math.min(this.lanes.callMs, this.seals.longestBetweenTicks(at));
    const key = costKey(turn);
    if (!(mostMs > 0) || !this.costs.latelyAbove(key, mostMs / Number(turn.gas), at)) return undefined;
    // The source's own short calls to the target: a probe on the target's alone would let any
    // source's dear calldata through on what cheap ones promised.
    const quick = this.quick(waiting, at);
    if (quick !== undefined && !quick.probe) return undefined;
    const expectedMs = this.costs.peaks(key, at)!.lately * Number(turn.gas);
    return { expectedMs, mostMs, retryAfterMs: Math.max(1, Math.ceil(COST_HALF_LIFE_MS * Math.log2(expectedMs / mostMs))) };
  }

  /** What a heavy call is planned to take between ticks: its source's last, or by its cost (a source with no heavy call yet, by the dearest seen). */
  private plannedMs(line: Line, at: number): number {
    const turn = line.waiting[0]!.turn;
    // A source without a heavy call yet, by the dearest: a source whose calls are short keeps its own.
    const peaks = this.costs.peaks(costKey(turn), at) ?? (line.heavyMs === 0 ? this.costs.peaks(DEAREST, at) : undefined);
    return Math.max(line.heavyMs, (peaks?.highest ?? 0) * Number(turn.gas));
  }

  /**
   * The EL time a call is expected to take if it is quick, undefined if not: a call within
   * `quickGas` at most `quickMs` scaled by its gas (what the gas buys of the dearest code), a
   * call to a target the least the source's own calls to it, or the target's, ever took (`probe`:
   * on the target's, the source being new to it). `at`: now, read once by the caller.
   */
  private quick({ turn, pair }: Waiting, at: number): QuickExpectation | undefined {
    const { quickGas, quickMs } = this.lanes;
    if (turn.gas <= quickGas) return { ms: (quickMs * Number(turn.gas)) / Number(quickGas), probe: false };
    // No pair: the call has no target to learn.
    if (pair === undefined || this.sources.latelyAbove(turn.source, quickMs, at)) return undefined;
    // The source's own calls to the target first: what others' calls did to it (marked it dear
    // through their calldata) says nothing of the source's.
    const own = this.pairs.leastIfWithin(pair, quickMs, at);
    // The least it ever took: what it costs the EL; more was its waits on a busy one.
    if (own !== undefined) return { ms: own, probe: false };
    // A source's first calls to a target go by what the target's calls took, one at a time: a
    // crowd of sources new to a target (each with calldata of its own) must not all run on what
    // the target's cheap calls promised. The first that breaks the promise marks its source.
    const target = this.targets.leastIfWithin(turn.target!, quickMs, at);
    if (target === undefined || this.probing.has(turn.target!)) return undefined;
    return { ms: target, probe: true };
  }

  /** The waiting line with the earliest start tag whose head may go on the quick lane, and what is expected of that head. */
  private earliestQuick(at: number): { readonly line: Line; readonly quick: QuickExpectation } | undefined {
    let best: { line: Line; quick: QuickExpectation } | undefined;
    for (let i = 0; i < this.readyCount; i++) {
      const line = this.ready[i]!;
      // Only a line that would start earlier is worth asking about.
      if (best !== undefined && !earlier(line, best.line)) continue;
      const quick = this.quick(line.waiting[0]!, at);
      if (quick !== undefined) best = { line, quick };
    }
    return best;
  }

  /** The waiting line with the earliest start tag. */
  private earliest(): Line | undefined {
    let best: Line | undefined;
    for (let i = 0; i < this.readyCount; i++) {
      const line = this.ready[i]!;
      if (best === undefined || earlier(line, best)) best = line;
    }
    return best;
  }

  /** Starts what the lanes have room for; `at`: now, read once by the caller. */
  private pump(at: number): void {
    for (;;) {
      let lane: Lane | undefined;
      let line: Line | undefined;
      let expected = 0;
      let probe = false;
      if (this.lanes.quick > 0 && this.running.quick < this.lanes.quickMost) {
        const found = this.earliestQuick(at);
        line = found?.line;
        const expects = found?.quick.ms ?? 0;
        probe = found?.quick.probe ?? false;
        expected = expects <= this.lanes.quickMs / TINY_SHARE ? 0 : expects;
        // Tiny calls bound by their gas at once; tiny calls expected by their target up to the
        // limit (their cost is only known once they end); others while the EL time expected of
        // them fits the budget (one alone always runs).
        const fits =
          found !== undefined &&
          (expected > 0
            ? this.quickLoad === 0 || this.quickLoad + expected <= this.lanes.quick * this.lanes.quickMs
            : found.line.waiting[0]!.turn.gas <= this.lanes.quickGas || this.tinyRunning < Math.floor(this.quickLimit));
        if (fits) lane = 'quick';
      }
      // Calls placed between ticks, one at a time: two at once could each hold the other at a seal.
      const watching = lane === undefined && this.seals.watching(at);
      if (lane === undefined && this.running.heavy < (watching ? 1 : this.lanes.heavy)) {
        line = this.earliest();
        const wait = line === undefined || !watching ? 0 : this.seals.waitFor(this.plannedMs(line, at), at);
        if (wait > 0) this.pumpIn(wait, at);
        else if (line !== undefined) lane = 'heavy';
      }
      if (lane === undefined || line === undefined) return;
      const waiting = line.waiting.shift()!;
      this.waiting--;
      if (line.waiting.length === 0) this.unready(line);
      if (waiting.turn.gone()) {
        waiting.turn.dropped();
        continue;
      }
      // What its source showed while it waited counts too (a second call sent beside a first).
      const refusal = this.overlong(waiting, at);
      if (refusal !== undefined) {
        waiting.turn.refused(refusal);
        continue;
      }
      this.run(waiting, line, lane, lane === 'quick' ? expected : 0, lane === 'quick' && probe, at);
    }
  }

  /** Pumps again in `ms`, unless a pump is set sooner. */
  private pumpIn(ms: number, at: number): void {
    if (at + ms >= this.pumpAt) return;
    this.pumpAt = at + ms;
    this.later(() => {
      this.pumpAt = Number.POSITIVE_INFINITY;
      this.pump(this.now());
    }, ms);
  }

  private run({ turn, pair }: Waiting, line: Line, lane: Lane, expected: number, probing: boolean, startedAt: number): void {
    const start = Math.max(this.virtual, line.finish);
    this.virtual = start;
    line.finish = start + PROVISIONAL_MS;
    line.running++;
    this.running[lane]++;
    const tiny = lane === 'quick' && expected === 0 && turn.gas > this.lanes.quickGas;
    const probe = probing ? turn.target : undefined;
    this.quickLoad += expected;
    if (tiny) this.tinyRunning++;
    if (probe !== undefined) this.probing.add(probe);
    let over = false;
    turn.start(lane, (elMs) => {
      if (over) return;
      over = true;
      const at = this.now();
      this.running[lane]--;
      this.quickLoad = this.running.quick === 0 ? 0 : this.quickLoad - expected;
      if (tiny) this.tinyRunning--;
      if (probe !== undefined) this.probing.delete(probe);
      line.running--;
      line.finish += Math.max(0, elMs - PROVISIONAL_MS);
      // The longest of its recent calls there, fading: a call that may run long is planned as long.
      if (lane === 'heavy') line.heavyMs = Math.max(elMs, line.heavyMs * HEAVY_MS_FADE);
      if (lane === 'heavy' && elMs > this.lanes.quickMs) this.seals.longEnded(at - elMs, at);
      else this.seals.answered(elMs, at);
      this.learnCost(turn, elMs, startedAt, at);
      this.learn(turn, pair, lane, elMs, startedAt, expected, at);
      if (elMs > this.lanes.quickMs) this.longEnded(turn.source, at);
      this.answeredAt(elMs, at);
      this.pump(at);
    });
  }

  /**
   * A long call's own EL time per gas (ownMs), unless that was short, or within what a crowded EL
   * makes of any call. A short call's says little: its time is mostly what any call costs,
   * whatever its gas.
   */
  private learnCost(turn: ElTurn, elMs: number, startedAt: number, at: number): void {
    if (!(elMs > this.lanes.quickMs) || turn.gas === 0n) return;
    const own = this.ownMs(startedAt, elMs, turn.source, at);
    if (own <= this.lanes.quickMs || this.asCrowdedMakes(own)) return;
    const cost = own / Number(turn.gas);
    this.costs.record(costKey(turn), cost, at);
    this.costs.record(DEAREST, cost, at);
  }

  private longEnded(source: string, at: number): void {
    if (source !== this.lastLongSource) {
      this.otherLongAt = this.lastLongAt;
      this.otherLongQuick = this.lastLongQuick;
      this.lastLongSource = source;
    }
    this.lastLongAt = at;
    this.lastLongQuick = this.lastResponsive;
  }

  /**
   * What a large call's EL time teaches of its target, and on the quick lane of its source and of
   * the lane's limit (`expected` 0: it ran as a tiny call).
   */
  private learn(turn: ElTurn, pair: string | undefined, lane: Lane, elMs: number, startedAt: number, expected: number, at: number): void {
    if (turn.gas <= this.lanes.quickGas) return;
    if (this.crowded(startedAt, elMs, turn.source, at)) return;
    if (lane === 'quick' && expected === 0) {
      const most = Math.max(1, this.lanes.quickMost);
      this.quickLimit =
        elMs > this.lanes.quickMs ? Math.max(1, this.quickLimit / 2) : Math.min(most, this.quickLimit + 1 / this.quickLimit);
    }
    if (pair !== undefined) {
      const counted = this.pairs.highestAbove(pair, this.lanes.quickMs, at);
      if (elMs <= this.lanes.quickMs || !counted) this.targets.recordAgainst(turn.target!, elMs, this.lanes.quickMs, at);
      this.pairs.recordAgainst(pair, elMs, this.lanes.quickMs, at);
    }
    if (lane === 'quick') this.sources.recordAgainst(turn.source, elMs, this.lanes.quickMs, at);
  }

  /** An idle source whose calls no longer count against it: as good as new. */
  private forgotten(line: Line): boolean {
    return line.waiting.length === 0 && line.running === 0 && line.finish <= this.virtual;
  }

  /** Out of `ready`: the last line takes its place. */
  private unready(line: Line): void {
    const last = this.ready[--this.readyCount]!;
    this.ready[line.slot] = last;
    last.slot = line.slot;
    this.ready[this.readyCount] = undefined;
    line.slot = -1;
  }

  /**
   * Past MAX_LINES, the idle sources go: those as good as new first, then, if that left more than
   * half, every idle one whatever it used (memory is bounded first).
   */
  private forgetIdle(): void {
    for (const [source, line] of this.lines) if (this.forgotten(line)) this.lines.delete(source);
    if (this.lines.size < MAX_LINES / 2) return;
    for (const [source, line] of this.lines) if (line.waiting.length === 0 && line.running === 0) this.lines.delete(source);
  }
}
