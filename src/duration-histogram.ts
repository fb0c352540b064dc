/**
 * The request-duration histogram by method, counted in plain arrays and handed to prom-client,
 * which formats and aggregates it like its own histograms.
 *
 * Why not prom-client's `Histogram`: its `observe()` converts, validates and hashes the labels
 * on every call, which cost 6-12% of a proxied read's CPU (docs/decisions/0002). Here
 * a method's series is resolved once and an observation is a bucket search and three additions.
 * The exposition is prom-client's: this object gives the registry the same values its
 * `Histogram.get()` would (a test holds the text to prom-client's byte for byte).
 */
import type { Metric, Registry } from 'prom-client';

/** One sample as prom-client's registry reads it from a metric's `get()`. */
interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName: string;
}

interface Series {
  /** Observations per bucket, not cumulative; the last slot is above every bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
  /** This series' child, handed out by every `child()` call for its label. */
  readonly child: { observe(seconds: number): void };
}

export class DurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    private readonly labelName: string,
    registry: Registry,
  ) {
    // The registry takes any object with a name and get(); its type lists only its own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of one label value, created on first use; observe through it. */
  child(label: string): { observe(seconds: number): void } {
    return (this.series.get(label) ?? this.create(label)).child;
  }

  private create(label: string): Series {
    const { bounds } = this;
    const series: Series = {
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      child: {
        observe(seconds) {
          let i = 0;
          while (i < bounds.length && seconds > bounds[i]!) i++;
          series.counts[i]!++;
          series.sum += seconds;
          series.count++;
        },
      },
    };
    this.series.set(label, series);
    return series;
  }

  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Sample[] }> {
    const values: Sample[] = [];
    for (const [label, { counts, sum, count }] of this.series) {
      // Only after a reset: prom-client shows a series again once it is observed.
      if (count === 0) continue;
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le: bound, [this.labelName]: label }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', [this.labelName]: label }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels: { [this.labelName]: label }, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: { [this.labelName]: label }, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every series in place, so the children already handed out keep counting. */
  reset(): void {
    for (const series of this.series.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}
