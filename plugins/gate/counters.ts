/** What the gate has done since start: feeds `svc_dropStats` (ingress group) and `/metrics`. */
export class GateCounters {
  seen = 0;
  /** Forwarded and acknowledged by the submission target ("sequenced"). */
  admitted = 0;
  /** Refusals answered from the verdict cache. */
  cachedVerdicts = 0;
  readonly refusedByReason = new Map<string, number>();

  refused(reason: string): void {
    this.refusedByReason.set(reason, (this.refusedByReason.get(reason) ?? 0) + 1);
  }
}
