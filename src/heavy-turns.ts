/**
 * Gas-heavy reads' turns on the EL connections kept for them (`upstreams.heavy_connections`):
 * at most that many run at once, and those waiting are served round-robin by source, so that
 * many sources' backlogs delay a call by at most one call of each, not by all of theirs (in
 * undici's own queue they waited first come first served).
 */
import { FairQueue } from './fair-queue.js';

export interface HeavyTurn {
  /** True once nobody waits for the answer: a turn not started yet is then dropped. */
  readonly gone: () => boolean;
  /** Runs the call; `ended` is called once it is over (answered, failed or cut). */
  start(ended: () => void): void;
  /** Told instead of `start` when the turn was dropped. */
  dropped(): void;
}

export class HeavyTurns {
  private running = 0;
  private readonly waiting = new FairQueue<HeavyTurn>(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);

  /** `concurrency`: the connections the calls go out on. */
  constructor(private concurrency: number) {}

  /**
   * A reload's number of connections: the calls running go on (on the pool they started on) and
   * count against it, so the EL never has more than the larger of the two numbers at once.
   */
  resize(concurrency: number): void {
    this.concurrency = concurrency;
    this.pump();
  }

  /** Calls waiting for their turn (for tests). */
  get queued(): number {
    return this.waiting.size;
  }

  /** Queues `turn` behind `source`'s earlier ones (rate-limit bounds how many a source has). */
  take(source: string, turn: HeavyTurn): void {
    this.waiting.push(source, turn);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.concurrency) {
      const turn = this.waiting.next();
      if (turn === undefined) return;
      if (turn.gone()) {
        turn.dropped();
        continue;
      }
      this.running++;
      let over = false;
      turn.start(() => {
        if (over) return;
        over = true;
        this.running--;
        this.pump();
      });
    }
  }
}
