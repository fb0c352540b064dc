/**
 * A labelled prom-client counter for hot paths: increments are kept as plain numbers per label
 * set and handed to prom-client when it collects. A labelled `inc()` hashes its labels object on
 * every call, which showed in the profiles of cheap refusals and admitted submissions.
 * Label values must come from closed sets (as every label of the ingress does).
 */
import { Counter, type Registry } from 'prom-client';

interface Pending<L extends string> {
  readonly labels: Record<L, string>;
  count: number;
}

/** One label set's count, to add to directly (`count++`) where the label values are known ahead. */
export interface CounterSeries {
  count: number;
}

export class BatchedCounter<L extends string> {
  private readonly pending = new Map<string, Pending<L>>();

  constructor(
    name: string,
    help: string,
    private readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    const pending = this.pending;
    new Counter<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        for (const entry of pending.values()) {
          if (entry.count > 0) this.inc(entry.labels, entry.count);
          entry.count = 0;
        }
      },
    });
  }

  /** Counts one, for the label values given in `labelNames` order. */
  inc(...values: string[]): void {
    this.series(...values).count++;
  }

  /** The count of the label values given in `labelNames` order, shown once it is above zero. */
  series(...values: string[]): CounterSeries {
    const key = values.join('\0');
    let entry = this.pending.get(key);
    if (entry === undefined) {
      const labels = Object.fromEntries(this.labelNames.map((name, i) => [name, values[i] ?? ''])) as Record<L, string>;
      entry = { labels, count: 0 };
      this.pending.set(key, entry);
    }
    return entry;
  }
}
