/**
 * The cornerstone of issue 15: while one source (127.0.0.1) runs an attack within its quota,
 * another (127.0.0.2) keeps being served. The ingress runs as its own process (the shipped
 * production chain, a real anvil), so the attacker's load generator is not on its event loop;
 * for each attack, the victim's `eth_chainId` median must stay under 100 ms (the floor the
 * issue sets everywhere; the medians are printed, typically a few ms here).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { p256HeavyFrames, RECIPIENT } from '../../support/frames.js';
import { useAnvil } from '../helpers/el.js';

const ATTACK_MS = 2_000;
const MEDIAN_CEILING_MS = 100;

const call = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

describe('victim: another source is served while one attacks within its quota', function () {
  this.timeout(60_000);
  const anvil = useAnvil();
  let ingress: IngressProcess;

  before(async () => {
    process.env.SVC_VICTIM_TOKEN = 'victim-test-operator-token-0123';
    const yaml = readFileSync('config/ingress.yaml', 'utf8')
      .replace('listen: 127.0.0.1:8545', 'listen: 127.0.0.1:0')
      .replace('metrics_listen: 127.0.0.1:9645', '')
      .replace('execution: http://127.0.0.1:18545', `execution: ${anvil.current.url}`)
      .replace('submit: http://127.0.0.1:9651', `submit: ${anvil.current.url}`)
      .replace('node: http://127.0.0.1:9651', `node: ${anvil.current.url}`)
      .replace('token_file: /etc/svc-ingress/operator-token', 'token_env: SVC_VICTIM_TOKEN');
    ingress = await startIngressProcess(yaml);
  });
  after(async () => {
    ingress?.child.kill('SIGTERM');
    await ingress?.exited;
  });

  /** Runs `body()` from 8 connections of 127.0.0.1 while 127.0.0.2 sends eth_chainId one at a time; the victim's median. */
  async function underAttack(body: (i: number) => string): Promise<number> {
    const attacker = new Pool(ingress.url, { connections: 8, localAddress: '127.0.0.1' });
    const victim = new Pool(ingress.url, { connections: 1, localAddress: '127.0.0.2' });
    const until = Date.now() + ATTACK_MS;
    let sent = 0;
    const attack = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          const reply = await attacker.request({
            path: '/',
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: body(sent++),
          });
          await reply.body.dump();
        }
      }),
    );
    const latencies: number[] = [];
    while (Date.now() < until) {
      const started = performance.now();
      const reply = await victim.request({
        path: '/',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: call('eth_chainId', []),
      });
      expect(await reply.body.text()).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await attack;
    await Promise.all([attacker.close(), victim.close()]);
    latencies.sort((a, b) => a - b);
    return latencies[Math.floor(latencies.length / 2)]!;
  }

  const attacks: Array<[string, () => (i: number) => string]> = [
    [
      'F4: frame transactions with 14 P256 entries',
      () => {
        const frames = p256HeavyFrames(40);
        return (i) => call('eth_sendRawTransaction', [frames[i % frames.length]]);
      },
    ],
    [
      'F5: eth_feeHistory of 1,024 blocks and 100 percentiles',
      () => () => call('eth_feeHistory', ['0x400', 'latest', Array.from({ length: 100 }, (_, p) => p)]),
    ],
    [
      'F6: 500 KB bodies of empty arrays',
      () => {
        const flood = `[${Array.from({ length: 170_000 }, () => '[]').join(',')}]`;
        return () => flood;
      },
    ],
    [
      'F8: eth_call asking for all the gas there is',
      () => () => call('eth_call', [{ to: RECIPIENT, gas: `0x${'f'.repeat(64)}` }, 'latest']),
    ],
  ];
  for (const [name, makeBody] of attacks) {
    it(`${name}: the victim's median stays under ${MEDIAN_CEILING_MS} ms`, async () => {
      const median = await underAttack(makeBody());
      console.log(`      victim median under "${name}": ${median.toFixed(2)} ms`);
      expect(median).to.be.below(MEDIAN_CEILING_MS);
    });
  }
});
