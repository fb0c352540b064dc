/**
 * The operator kit (ops/): the alerting rules pass `promtool check rules` (Debian's prometheus
 * package; the test command installs it, .ci/requirements), and every metric the rules and the dashboard name is on
 * /metrics of the running devnet, the node's gauges included.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { startDevnet, type Devnet } from '../../devnet/devnet.js';
import { createLogger } from '../../src/log.js';
import { rpc } from '../../support/http.js';
import { OPERATOR_TOKEN } from '../helpers/ingress.js';

const RULES = 'ops/alerts.yaml';
const DASHBOARD = 'ops/grafana-dashboard.json';
/** Metrics the rules use that come from Prometheus itself or the blackbox exporter. */
const EXTERNAL = new Set(['up', 'probe_success']);

/** The metric names in PromQL expressions: `svc_…` identifiers and the external ones; histogram series to their family. */
function metricsIn(expressions: string[]): Set<string> {
  const names = new Set<string>();
  for (const expr of expressions) {
    for (const [name] of expr.matchAll(/\b(?:svc_[a-z0-9_]+|up|probe_success)\b(?=\s*[{[)\s]|$)/g)) {
      names.add(name.replace(/_(bucket|sum|count)$/, ''));
    }
  }
  return names;
}

describe('operator kit (ops/)', () => {
  let devnet: Devnet;

  before(async () => {
    process.env.SVC_OPERATOR_TOKEN = OPERATOR_TOKEN;
    devnet = await startDevnet({ port: 0, metricsPort: 0, node: { commitIntervalMs: 40, blockIntervalMs: 200 } }, createLogger('error'));
    // A few answers and refusals, so that every labelled series has a sample.
    await rpc(devnet.ingress.url, 'eth_chainId');
    await rpc(devnet.ingress.url, 'eth_noSuchMethod');
    await rpc(devnet.ingress.url, 'eth_sendRawTransaction', ['0x02ab']);
  });
  after(() => devnet?.stop());

  it('has alerting rules promtool accepts', () => {
    const out = execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(out).to.match(/SUCCESS: \d+ rules found/);
  });

  it('names in its rules and dashboard only metrics the running devnet exports', async () => {
    const rules = readFileSync(RULES, 'utf8');
    const ruleExpressions = [...rules.matchAll(/^\s*expr: (.+)$/gm)].map((m) => m[1]!);
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const panelExpressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    const named = metricsIn([...ruleExpressions, ...panelExpressions]);
    expect(named.size).to.be.greaterThan(20);

    const reply = await request(`${devnet.ingress.metricsUrl}/metrics`);
    const exported = new Set([...(await reply.body.text()).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    const missing = [...named].filter((name) => !EXTERNAL.has(name) && !exported.has(name));
    expect(missing, 'named but not exported').to.deep.equal([]);
    // The nine node gauges of spec 4.7 are all in the kit.
    for (const gauge of [
      'checkpoint_lag_commits',
      'checkpoint_freshness_alarms_total',
      'retention_target_floor',
      'retention_disk_guard_active',
      'retention_disk_free_bytes',
      'observer_stranded',
      'follower_stalled_seconds',
      'archive_cert_gap_sequences',
      'block_key_rotations_applied_total',
    ]) {
      expect(named, gauge).to.include(`svc_${gauge}`);
    }
  });
});
