/**
 * Fan-out in slices (issue 38): a block may have tens of thousands of logs and a process
 * thousands of subscribers, and every send is event-loop time nobody's request paid for. The
 * feeds send a slice, then let the event loop serve what arrived meanwhile: a request waits
 * behind at most one slice of notifications (about a millisecond), never behind a whole block's.
 */
const SENDS_PER_SLICE = 256;

export class FanOut {
  private sent = 0;

  /** Counts one send; every `SENDS_PER_SLICE`, resolves only after the event loop's next turn. */
  sentOne(): Promise<void> | undefined {
    if (++this.sent % SENDS_PER_SLICE !== 0) return undefined;
    return new Promise((resolve) => setImmediate(resolve));
  }
}
