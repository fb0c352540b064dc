/**
 * Request-body bytes being received, for the whole process: a body is charged its declared
 * `Content-Length` before a byte of it is read and gives it back once it has been read (or its
 * request ended first). A body that does not fit in what is left is refused unread, so clients
 * withholding the last bytes of large bodies hold at most `limit` bytes of memory between them.
 */
export class BodyBudget {
  private used = 0;

  /** Bytes charged now (for tests and metrics). */
  get inFlight(): number {
    return this.used;
  }

  /**
   * Charges `bytes` against `limit` (read per call: a reload may change it); returns what gives
   * them back (idempotent), or undefined when they do not fit.
   */
  take(bytes: number, limit: number): (() => void) | undefined {
    if (bytes <= 0) return NOTHING;
    if (this.used + bytes > limit) return undefined;
    this.used += bytes;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.used -= bytes;
    };
  }
}

const NOTHING = () => {};
