import { expect } from 'chai';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { DurationHistogram } from '../../src/duration-histogram.js';

const NAME = 'svc_ingress_request_duration_seconds';
const HELP = 'Time from the request body to the end of the answer, by method.';
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
// On a bound, between bounds, below the first, above the last.
const OBSERVATIONS: Array<[string, number]> = [
  ['eth_chainId', 0.0003],
  ['eth_chainId', 0.0005],
  ['eth_chainId', 0.0007],
  ['eth_getLogs', 0.3],
  ['eth_getLogs', 12],
  ['other', 0.01],
  ['eth_chainId', 2.5],
];

function both(): { ours: Registry; theirs: Registry } {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new DurationHistogram(NAME, HELP, BOUNDS, 'method', ours);
  const reference = new Histogram({ name: NAME, help: HELP, labelNames: ['method'], buckets: BOUNDS, registers: [theirs] });
  for (const [method, seconds] of OBSERVATIONS) {
    histogram.child(method).observe(seconds);
    reference.labels({ method }).observe(seconds);
  }
  return { ours, theirs };
}

describe('duration histogram', () => {
  it("exposes the same Prometheus text as prom-client's Histogram for the same observations", async () => {
    const { ours, theirs } = both();
    const text = await ours.metrics();
    expect(text).to.equal(await theirs.metrics());
    expect(text).to.include(`${NAME}_bucket{le="0.0005",method="eth_chainId"} 2\n`);
    expect(text).to.include(`${NAME}_bucket{le="+Inf",method="eth_getLogs"} 2\n`);
    expect(text).to.include(`${NAME}_count{method="eth_chainId"} 4\n`);
  });

  it("gives the workers' aggregation what prom-client's Histogram gives it", async () => {
    const { ours, theirs } = both();
    const [a, b] = [await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON()];
    const summed = AggregatorRegistry.aggregate([a, a]);
    const reference = AggregatorRegistry.aggregate([b, b]);
    expect(await summed.metrics()).to.equal(await reference.metrics());
    expect(await summed.metrics()).to.include(`${NAME}_count{method="eth_chainId"} 8\n`);
  });

  it('starts empty again after a reset, and a child handed out before it keeps counting', async () => {
    const registry = new Registry();
    const histogram = new DurationHistogram(NAME, HELP, BOUNDS, 'method', registry);
    const child = histogram.child('eth_chainId');
    child.observe(0.002);
    registry.resetMetrics();
    expect(await registry.metrics()).to.equal(`# HELP ${NAME} ${HELP}\n# TYPE ${NAME} histogram\n`);
    child.observe(0.002);
    expect(await registry.metrics()).to.include(`${NAME}_count{method="eth_chainId"} 1\n`);
  });
});
