/**
 * Turns on the EL for the gas-heavy reads (eth_call, eth_estimateGas, eth_createAccessList,
 * eth_simulateV1), shared by the EL time each source measurably used.
 *
 * Two lanes of connections kept for them: `heavy` runs any call, `quick` only calls expected to
 * be short, so that a dapp's read or a wallet's estimate never waits behind a large call. Expected
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
 * time; an EL answering others quickly all along was not holding it.
 *
 * In each lane, waiting sources are served by start-time fair queueing on measured
 * milliseconds: a source's next call starts at the later of the current virtual time and the
 * end of its last, which the EL time that call took pushes on. A source whose calls take a
 * second each gets a second of virtual time per call, one whose calls take 2 ms gets 2 ms: while
 * both wait, the second is served about 500 times as often, and a source that used nothing
 * lately is served first. Within a source, first come first served.
 */
import { PeakHistory } from './peak-history.js';

export type Lane = 'quick' | 'heavy';

export interface ElTurn {
  readonly source: string;
  /** What call-gas.ts names the call's target, if it has one that can be learned. */
  readonly target: string | undefined;
  /** The gas its calls ask for in all, a call naming none counted at the cap, times the runs its method makes (call-gas.ts). */
  readonly gas: bigint;
  /** True once nobody waits for the answer: a turn not started yet is then dropped. */
  readonly gone: () => boolean;
  /** Runs the call on `lane`; `ended` is called once it is over, with the EL time it took. */
  start(lane: Lane, ended: (elMs: number) => void): void;
  /** Told instead of `start` when the turn was dropped. */
  dropped(): void;
}

export interface ElLanes {
  /** Connections of each lane: calls running at once. */
  readonly heavy: number;
  readonly quick: number;
  /** The most gas a call may ask for and be sent to the quick lane unmeasured. */
  readonly quickGas: bigint;
  /** A target (or a source's call on one) measured longer than this lately is kept out of the quick lane. */
  readonly quickMs: number;
}

/** How fast a long call's mark fades: 1 s is forgotten by a 50 ms bound in ~22 s. */
const PEAK_HALF_LIFE_MS = 5_000;
/** Sources and targets remembered (each a few dozen bytes). */
const PEAK_KEYS = 100_000;
/** What a call is charged when it starts, until its EL time is known. */
const PROVISIONAL_MS = 1;
/** Sources whose virtual time is kept while they are idle; past it the idle ones are forgotten. */
const MAX_LINES = 10_000;

interface Line {
  /** Virtual time at which this source's next call may start. */
  finish: number;
  readonly waiting: ElTurn[];
  running: number;
}

export class ElTurns {
  private virtual = 0;
  private readonly lines = new Map<string, Line>();
  /** Lines with a call waiting, in the order they became so (ties go to the earliest). */
  private readonly ready = new Set<Line>();
  private readonly running: Record<Lane, number> = { quick: 0, heavy: 0 };
  private waiting = 0;
  private readonly sources: PeakHistory;
  private readonly targets: PeakHistory;
  /** Per source and target: whether the source's long call on the target counted there lately. */
  private readonly pairs: PeakHistory;
  /** When the EL last answered a read within `quickMs`: it was not holding reads then. */
  private lastResponsive = Number.NEGATIVE_INFINITY;

  constructor(
    private lanes: ElLanes,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.sources = new PeakHistory(PEAK_HALF_LIFE_MS, PEAK_KEYS, now);
    this.targets = new PeakHistory(PEAK_HALF_LIFE_MS, PEAK_KEYS, now);
    this.pairs = new PeakHistory(PEAK_HALF_LIFE_MS, PEAK_KEYS, now);
  }

  /**
   * A reload's lanes: the calls running go on (on the pools they started on) and count against
   * the new numbers, so the EL never has more than the larger of the two at once.
   */
  resize(lanes: ElLanes): void {
    this.lanes = lanes;
    this.pump();
  }

  /** Calls waiting for their turn (for tests and metrics). */
  get queued(): number {
    return this.waiting;
  }

  /** Another read answered in `elMs`: one within `quickMs` shows the EL was serving reads then. */
  answered(elMs: number): void {
    if (elMs <= this.lanes.quickMs) this.lastResponsive = this.now();
  }

  /** Calls running on `lane` now. */
  runningOn(lane: Lane): number {
    return this.running[lane];
  }

  take(turn: ElTurn): void {
    let line = this.lines.get(turn.source);
    if (line === undefined) {
      if (this.lines.size >= MAX_LINES) this.forgetIdle();
      line = { finish: this.virtual, waiting: [], running: 0 };
      this.lines.set(turn.source, line);
    }
    line.waiting.push(turn);
    this.waiting++;
    this.ready.add(line);
    this.pump();
  }

  /** Whether `turn` may run on the quick lane now. */
  private quick(turn: ElTurn): boolean {
    const { quickGas, quickMs } = this.lanes;
    if (turn.gas <= quickGas) return true;
    const target = turn.target === undefined ? undefined : this.targets.peaks(turn.target);
    return (
      target !== undefined &&
      target.least <= quickMs &&
      target.lately <= quickMs &&
      (this.sources.peaks(turn.source)?.lately ?? 0) <= quickMs
    );
  }

  /** The waiting line whose head `fits` with the earliest start tag. */
  private earliest(fits: (turn: ElTurn) => boolean): Line | undefined {
    let best: Line | undefined;
    for (const line of this.ready) {
      if (!fits(line.waiting[0]!)) continue;
      if (best === undefined || line.finish < best.finish) best = line;
    }
    return best;
  }

  private pump(): void {
    for (;;) {
      let lane: Lane | undefined;
      let line: Line | undefined;
      if (this.running.quick < this.lanes.quick) {
        line = this.earliest((turn) => this.quick(turn));
        if (line !== undefined) lane = 'quick';
      }
      if (lane === undefined && this.running.heavy < this.lanes.heavy) {
        line = this.earliest(() => true);
        if (line !== undefined) lane = 'heavy';
      }
      if (lane === undefined || line === undefined) return;
      const turn = line.waiting.shift()!;
      this.waiting--;
      if (line.waiting.length === 0) this.ready.delete(line);
      if (turn.gone()) {
        turn.dropped();
        this.settle(turn.source, line);
        continue;
      }
      this.run(turn, line, lane);
    }
  }

  private run(turn: ElTurn, line: Line, lane: Lane): void {
    const start = Math.max(this.virtual, line.finish);
    this.virtual = start;
    line.finish = start + PROVISIONAL_MS;
    line.running++;
    this.running[lane]++;
    let over = false;
    const startedAt = this.now();
    turn.start(lane, (elMs) => {
      if (over) return;
      over = true;
      this.running[lane]--;
      line.running--;
      line.finish += Math.max(0, elMs - PROVISIONAL_MS);
      this.learn(turn, lane, elMs, startedAt);
      this.answered(elMs);
      this.settle(turn.source, line);
      this.pump();
    });
  }

  /** What a large call's EL time teaches of its target, and on the quick lane of its source. */
  private learn(turn: ElTurn, lane: Lane, elMs: number, startedAt: number): void {
    if (turn.gas <= this.lanes.quickGas) return;
    // Long, and the EL answered no other read quickly once it was: it may have been held.
    if (elMs > this.lanes.quickMs && this.lastResponsive <= startedAt + this.lanes.quickMs) return;
    if (turn.target !== undefined) {
      const pair = `${turn.source}\n${turn.target}`;
      const counted = (this.pairs.peaks(pair)?.highest ?? 0) > this.lanes.quickMs;
      if (elMs <= this.lanes.quickMs || !counted) this.targets.record(turn.target, elMs);
      this.pairs.record(pair, elMs);
    }
    if (lane === 'quick') this.sources.record(turn.source, elMs);
  }

  /** An idle source whose calls no longer count against it is forgotten. */
  private settle(source: string, line: Line): void {
    if (line.waiting.length === 0 && line.running === 0 && line.finish <= this.virtual) this.lines.delete(source);
  }

  /** Past MAX_LINES, the idle sources go, whatever they used: memory is bounded first. */
  private forgetIdle(): void {
    for (const [source, line] of this.lines) if (line.waiting.length === 0 && line.running === 0) this.lines.delete(source);
  }
}
