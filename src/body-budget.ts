/**
 * Request-body bytes being received, for the whole process: a body is charged its declared
 * `Content-Length` before a byte of it is read and gives it back once it has been read (or its
 * request ended first). A body that does not fit in what is left is refused unread, so clients
 * withholding the last bytes of large bodies hold at most `limit` bytes of memory between them.
 *
 * Shared fairly: one source may hold at most `1 / SOURCE_SHARE` of the limit (at least one body
 * of the largest size), so that a few sources withholding large bodies cannot spend it for
 * everyone; and a body of `SMALL_BODY_BYTES` or less (every call but the largest transactions: an
 * ML-DSA-65 frame transfer is ~22 KB of hex) is never refused by the budget (`max_connections`
 * and the server's body idle cut bound those); the server names no source for them. A body that
 * brings no byte for `client_timeouts.body_idle_ms` is cut (server/index.ts) and gives its bytes back.
 */
export const SOURCE_SHARE = 8;
export const SMALL_BODY_BYTES = 64 * 1024;

export type BodyRefused = 'source' | 'all';

export class BodyBudget {
  private used = 0;
  private readonly bySource = new Map<string, number>();

  /** Bytes charged now (for tests and metrics). */
  get inFlight(): number {
    return this.used;
  }

  /**
   * Charges `bytes` against `limit` (read per call: a reload may change it) and `source`'s share
   * of it (none for `null`: a trusted proxy speaking for many); returns what gives them back
   * (idempotent), or which bound refused them.
   */
  take(bytes: number, limit: number, source: string | null = null, largestBody = 0): (() => void) | BodyRefused {
    if (bytes <= 0) return NOTHING;
    const small = bytes <= SMALL_BODY_BYTES;
    if (!small && this.used + bytes > limit) return 'all';
    if (source === null) {
      this.used += bytes;
      return this.giveBack(bytes);
    }
    const held = this.bySource.get(source) ?? 0;
    if (!small && held + bytes > Math.max(limit / SOURCE_SHARE, largestBody)) return 'source';
    this.used += bytes;
    this.bySource.set(source, held + bytes);
    return this.giveBack(bytes, source);
  }

  /** Gives `bytes` back, to `source`'s share too, once however often it is called. */
  private giveBack(bytes: number, source?: string): () => void {
    let holding = true;
    return () => {
      if (!holding) return;
      holding = false;
      this.used -= bytes;
      if (source === undefined) return;
      const left = this.bySource.get(source)! - bytes;
      if (left === 0) this.bySource.delete(source);
      else this.bySource.set(source, left);
    };
  }
}

const NOTHING = () => {};
