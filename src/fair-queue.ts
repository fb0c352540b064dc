/**
 * Waiting work, served round-robin by source (the gate's worker pool, gas-heavy reads' EL
 * connections): each source has its own first-in-first-out line,
 * and `next()` takes one item from each waiting source in turn. One source's backlog, however
 * long, delays another source's item by at most one of its own items (one per other waiting
 * source in all). Bounded per source and in total: `push` says which bound refused.
 */
export type Refused = 'source' | 'total';

export class FairQueue<T> {
  /** Sources with waiting items, in serving order (a Map keeps insertion order). */
  private readonly lines = new Map<string, T[]>();
  private waiting = 0;

  constructor(
    private readonly perSourceMax: number,
    private readonly totalMax: number,
  ) {}

  get size(): number {
    return this.waiting;
  }

  /** Queues `item` behind `source`'s earlier ones, or says which bound is full. */
  push(source: string, item: T): Refused | undefined {
    const line = this.lines.get(source);
    if ((line?.length ?? 0) >= this.perSourceMax) return 'source';
    if (this.waiting >= this.totalMax) return 'total';
    if (line === undefined) this.lines.set(source, [item]);
    else line.push(item);
    this.waiting++;
    return undefined;
  }

  /** The oldest item of the source whose turn it is; that source goes to the back. */
  next(): T | undefined {
    const first = this.lines.entries().next();
    if (first.done === true) return undefined;
    const [source, line] = first.value;
    const item = line.shift()!;
    this.lines.delete(source);
    if (line.length > 0) this.lines.set(source, line);
    this.waiting--;
    return item;
  }

  /** Removes every item `dropped` says is no longer wanted, and returns them. */
  drop(dropped: (item: T) => boolean): T[] {
    const gone: T[] = [];
    for (const [source, line] of this.lines) {
      const kept: T[] = [];
      for (const item of line) (dropped(item) ? gone : kept).push(item);
      if (kept.length === 0) this.lines.delete(source);
      else this.lines.set(source, kept);
    }
    this.waiting -= gone.length;
    return gone;
  }
}
