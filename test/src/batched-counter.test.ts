import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { BatchedCounter } from '../../src/batched-counter.js';

const NAME = 'svc_ingress_refusals_total';
const HELP = 'Error answers by the plugin that gave them and the JSON-RPC code.';

describe('BatchedCounter', () => {
  it('exposes what prom-client counting each call would, scrape after scrape', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const batched = new BatchedCounter(NAME, HELP, ['plugin', 'code'], ours);
    const reference = new Counter({ name: NAME, help: HELP, labelNames: ['plugin', 'code'], registers: [theirs] });
    const count = (plugin: string, code: string) => {
      batched.inc(plugin, code);
      reference.inc({ plugin, code });
    };
    count('gate', '-32000');
    count('gate', '-32000');
    count('allowlist', '-32601');
    expect(await ours.metrics()).to.equal(await theirs.metrics());
    // A second scrape hands nothing over twice; counts since then add up.
    expect(await ours.metrics()).to.equal(await theirs.metrics());
    count('gate', '-32000');
    count('rate-limit', '-32005');
    const text = await ours.metrics();
    expect(text).to.equal(await theirs.metrics());
    expect(text).to.include('svc_ingress_refusals_total{plugin="gate",code="-32000"} 3');
  });

  it('keeps label sets apart however their values are split', async () => {
    const registry = new Registry();
    const batched = new BatchedCounter('c_total', 'c', ['a', 'b'], registry);
    batched.inc('x', 'yz');
    batched.inc('xy', 'z');
    const text = await registry.metrics();
    expect(text).to.include('c_total{a="x",b="yz"} 1');
    expect(text).to.include('c_total{a="xy",b="z"} 1');
  });
});
