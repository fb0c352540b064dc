/**
 * Whether an upstream answers, as its requests find out: one warning when a request first finds
 * it unreachable (no connection, no answer within its timeout), one when a request is answered
 * again, with how long it was out. Nothing is asked for it: with no traffic, nothing changes.
 * The upstream is named by what it is, never by its address (log-audit.test.ts: no log line
 * names an upstream's address, which may carry credentials).
 */
import type { Logger } from './log.js';

export class Reachability {
  /** Since when it has been unreachable; undefined while it answers. */
  private downSince: number | undefined;

  constructor(
    private readonly log: Logger,
    /** What it is, for the log: "execution layer". */
    private readonly what: string,
  ) {}

  get reachable(): boolean {
    return this.downSince === undefined;
  }

  /** A request found it unreachable. */
  failed(cause: string): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.log.warn(`${this.what} unreachable`, { cause });
  }

  /** A request was answered. Called for every answer: one comparison while all is well. */
  answered(): void {
    if (this.downSince === undefined) return;
    const downMs = Date.now() - this.downSince;
    this.downSince = undefined;
    this.log.warn(`${this.what} reachable again`, { down_ms: downMs });
  }
}
