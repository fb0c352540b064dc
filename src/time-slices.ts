/**
 * Work in slices of event-loop time (issue 38): a block may have tens of thousands of logs and a
 * process thousands of subscribers, and every send is event-loop time nobody's request paid for.
 * The feeds and the notifier work for a slice (a millisecond), then let the event loop serve what
 * arrived meanwhile: a request waits behind at most one slice at each of its turns, never behind
 * a whole block's notifications.
 */
const SLICE_MS = 1;
/** How often the clock is read: a send or a parsed log costs a few microseconds. */
const CHECK_EVERY = 16;

export class TimeSlices {
  private count = 0;
  private started = performance.now();

  /** Counts one unit of work; once the slice is spent, a pause that ends at the event loop's next turn. */
  step(): Promise<void> | undefined {
    if (++this.count % CHECK_EVERY !== 0 || performance.now() - this.started < SLICE_MS) return undefined;
    return new Promise((resolve) =>
      setImmediate(() => {
        this.started = performance.now();
        resolve();
      }),
    );
  }
}
