import { expect } from 'chai';
import { Metrics } from '../../src/metrics.js';

describe('metrics', () => {
  describe('counters declared by plugins', () => {
    it('are exposed under their name, by label values in the declared order', async () => {
      const metrics = new Metrics();
      const verdicts = metrics.counter('svc_ingress_test_verdicts_total', 'Test verdicts.', ['verdict', 'reason']);
      verdicts.inc('refused', 'nonce-too-low');
      verdicts.inc('refused', 'nonce-too-low');
      verdicts.inc('admitted', '');
      const text = await metrics.registry.metrics();
      expect(text).to.include('# HELP svc_ingress_test_verdicts_total Test verdicts.\n');
      expect(text).to.include('svc_ingress_test_verdicts_total{verdict="refused",reason="nonce-too-low"} 2\n');
      expect(text).to.include('svc_ingress_test_verdicts_total{verdict="admitted",reason=""} 1\n');
    });

    it('are found again when declared again (a reload), counting on', async () => {
      const metrics = new Metrics();
      metrics.counter('svc_ingress_test_total', 'Test.', ['kind']).inc('a');
      const again = metrics.counter('svc_ingress_test_total', 'Test.', ['kind']);
      again.inc('a');
      expect(await metrics.registry.metrics()).to.include('svc_ingress_test_total{kind="a"} 2\n');
    });

    it('refuse a second declaration with other help or labels', () => {
      const metrics = new Metrics();
      metrics.counter('svc_ingress_test_total', 'Test.', ['kind']);
      expect(() => metrics.counter('svc_ingress_test_total', 'Test.', ['other'])).to.throw(
        'metric svc_ingress_test_total is already declared with other help or labels',
      );
      expect(() => metrics.counter('svc_ingress_test_total', 'Other.', ['kind'])).to.throw('already declared');
    });

    it('must be named under svc_ingress_', () => {
      expect(() => new Metrics().counter('gate_verdicts_total', 'Test.', [])).to.throw(
        'metric gate_verdicts_total must start with svc_ingress_',
      );
    });
  });

  it('counts requests by method and outcome, every method outside the known surface as "other"', async () => {
    const metrics = new Metrics();
    metrics.request('eth_chainId', 'proxied', 0.0001);
    metrics.request('eth_chainId', 'proxied', 0.002);
    metrics.request('eth_chainId', 'refused', 0.0001);
    metrics.request('debug_traceCall', 'refused', 0.0001);
    metrics.request('made_up', 'refused', 0.0001);
    metrics.request('made_up', 'error', 0.0001);
    const lines = (await metrics.registry.metrics())
      .split('\n')
      .filter((line) => /^svc_ingress_request(s_total|_duration_seconds_count)\{/.test(line));
    expect(lines).to.deep.equal([
      'svc_ingress_requests_total{method="eth_chainId",outcome="proxied"} 2',
      'svc_ingress_requests_total{method="eth_chainId",outcome="refused"} 1',
      'svc_ingress_requests_total{method="other",outcome="refused"} 2',
      'svc_ingress_requests_total{method="other",outcome="error"} 1',
      'svc_ingress_request_duration_seconds_count{method="eth_chainId"} 3',
      'svc_ingress_request_duration_seconds_count{method="other"} 3',
    ]);
  });

  it('counts the bytes streamed, from 0', async () => {
    const metrics = new Metrics();
    expect(await metrics.registry.metrics()).to.include('\nsvc_ingress_streamed_bytes_total 0\n');
    metrics.streamedBytes(39);
    metrics.streamedBytes(1_000);
    expect(await metrics.registry.metrics()).to.include('\nsvc_ingress_streamed_bytes_total 1039\n');
    metrics.streamedBytes(1);
    expect(await metrics.registry.metrics()).to.include('\nsvc_ingress_streamed_bytes_total 1040\n');
  });

  it('counts sequenced transactions for svc_dropStats and /metrics', async () => {
    const metrics = new Metrics();
    expect(metrics.sequencedTotal).to.equal(0);
    metrics.sequenced();
    metrics.sequenced();
    expect(metrics.sequencedTotal).to.equal(2);
    expect(await metrics.registry.metrics()).to.include('svc_ingress_txs_sequenced_total 2\n');
  });
});
