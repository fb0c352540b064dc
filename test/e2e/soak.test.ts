/**
 * Nothing lost, nothing leaked: 100,000 requests through the svc-ingress process, some of them
 * abandoned by their clients mid-flight. Afterwards every request got exactly one answer (or was
 * abandoned by its client), nothing is in flight, and descriptors and heap are back near their
 * baseline.
 */
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { Pool, request } from 'undici';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { useAnvil } from '../helpers/el.js';
import { testConfig } from '../helpers/ingress.js';
import { collectGarbage, inspectorUrl } from '../helpers/inspector.js';

const TOTAL = 100_000;
const ABORTED_EVERY = 20;
const CONCURRENCY = 64;
const BODY = '{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}';
const ANSWER = '{"jsonrpc":"2.0","id":7,"result":"0x1fcd"}';

describe('soak: 100,000 requests, some abandoned', function () {
  this.timeout(120_000);
  const anvil = useAnvil();
  let ingress: IngressProcess;
  let metricsUrl: string;

  before(async () => {
    ingress = await startIngressProcess(
      testConfig(anvil.current.url, undefined, 'metrics_listen: 127.0.0.1:0').replace('log_level: debug', 'log_level: info'),
      undefined,
      ['--inspect=127.0.0.1:0'],
    );
    metricsUrl = String((await ingress.waitForLog('operator listener: /metrics, /livez, /readyz')).url);
  });
  after(async () => {
    ingress.child.kill('SIGTERM');
    expect(await ingress.exited).to.equal(0);
  });

  const gauge = async (name: string) => {
    const text = await (await request(`${metricsUrl}/metrics`)).body.text();
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)![1]);
  };
  const fds = () => readdirSync(`/proc/${ingress.child.pid}/fd`).length;
  const liveHeap = async () => {
    await collectGarbage(inspectorUrl(ingress.lines));
    return gauge('svc_ingress_nodejs_heap_size_used_bytes');
  };

  it('answers every request exactly once and returns to its baseline', async () => {
    const pool = new Pool(ingress.url, { connections: CONCURRENCY, pipelining: 1 });
    const send = async (abort: boolean): Promise<'answered' | 'abandoned'> => {
      const controller = new AbortController();
      const reply = pool.request({
        path: '/',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: BODY,
        signal: controller.signal,
      });
      if (abort) {
        setImmediate(() => controller.abort());
        try {
          await (await reply).body.dump();
        } catch {
          // abandoned by design
        }
        return 'abandoned';
      }
      const text = await (await reply).body.text();
      expect(text).to.equal(ANSWER);
      return 'answered';
    };
    // Warm-up, then the baseline.
    for (let i = 0; i < 2_000; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, () => send(false)));
    const baseline = { fds: fds(), heap: await liveHeap() };

    let next = 0;
    const tally = { answered: 0, abandoned: 0 };
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < TOTAL) {
          const i = next++;
          tally[await send(i % ABORTED_EVERY === 0)]++;
        }
      }),
    );
    await pool.close();
    expect(tally.answered + tally.abandoned).to.equal(TOTAL);
    expect(tally.abandoned).to.equal(TOTAL / ABORTED_EVERY);

    expect(await gauge('svc_ingress_requests_in_flight')).to.equal(0);
    // Every body's share of max_body_bytes_in_flight came back, abandoned ones' included.
    expect(await gauge('svc_ingress_body_bytes_in_flight')).to.equal(0);
    const after = { fds: fds(), heap: await liveHeap() };
    console.log(
      `      fds ${baseline.fds} -> ${after.fds}; heap used ${(baseline.heap / 2 ** 20).toFixed(1)} -> ${(after.heap / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(after.fds).to.be.at.most(baseline.fds + 8);
    // Both figures follow a full collection, so they count live objects only; a leak of even
    // 64 bytes a request would add 6 MiB.
    expect(after.heap).to.be.below(baseline.heap + 4 * 2 ** 20);
  });
});
