/**
 * One source floods svc_estimateFrameGas with frames that loop until they run out of gas (each
 * estimate the most compute one may take), against the shipped production file, waiting as told
 * (Retry-After) and never over its in-flight caps. Another source's reads and its own estimates
 * are measured against their quiet baseline in the same run: the estimates' lane is the gate's
 * own, served by source, and what each estimate computed is its source's debt.
 */
import { expect } from 'chai';
import { Pool } from 'undici';
import { productionChain } from '../../bench/production.js';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { call } from '../../support/http.js';
import { ENDLESS_LOOP } from '../../support/verify-code.js';
import { useAnvil } from '../helpers/el.js';

const LOOPER = '0x00000000000000000000000000000000000c0de9';
const QUIET_MS = 4_000;
const ATTACK_MS = 8_000;

const body = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const frames = (target: string, from: string) => ({
  from,
  frames: [
    { mode: '0x1', flags: '0x3' },
    { mode: '0x2', target },
  ],
  signatures: [{ scheme: '0x1' }],
});
/** A wallet's estimate: a transfer of nothing to an account, its answer a few milliseconds of work. */
const WALLET_ESTIMATE = body('svc_estimateFrameGas', [
  frames('0x00000000000000000000000000000000000b0b0c', '0x00000000000000000000000000000000000b0b0b'),
]);
const READ = body('eth_getBalance', [LOOPER, 'latest']);
const FLOOD = body('svc_estimateFrameGas', [frames(LOOPER, '0x00000000000000000000000000000000000a77ac')]);

describe('estimate flood: another source served while one floods svc_estimateFrameGas at its quotas', function () {
  this.timeout(60_000);
  const anvil = useAnvil();
  let ingress: IngressProcess;
  const victim = () => new Pool(ingress.url, { connections: 1, localAddress: '127.0.0.3' });
  const attacker = () => new Pool(ingress.url, { connections: 8, localAddress: '127.0.0.2' });

  before(async () => {
    await call(anvil.current.url, 'anvil_setCode', [LOOPER, ENDLESS_LOOP]);
    ingress = await startIngressProcess(productionChain(anvil.current.url));
  });
  after(async () => {
    ingress?.child.kill('SIGTERM');
    await ingress?.exited;
  });

  const post = async (pool: Pool, payload: string) => {
    const started = performance.now();
    const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
    const text = await reply.body.text();
    return { ms: performance.now() - started, status: reply.statusCode, retryAfter: Number(reply.headers['retry-after'] ?? 1), text };
  };
  /** The victim's medians (ms) of alternating reads and estimates, one at a time, 20 ms apart. */
  const victimMedians = async (pool: Pool, forMs: number) => {
    const reads: number[] = [];
    const estimates: number[] = [];
    for (const end = Date.now() + forMs; Date.now() < end; ) {
      const read = await post(pool, READ);
      expect(read.status, read.text).to.equal(200);
      reads.push(read.ms);
      const estimate = await post(pool, WALLET_ESTIMATE);
      expect(JSON.parse(estimate.text).result?.frames, estimate.text).to.have.length(2);
      estimates.push(estimate.ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const at = (values: number[], share: number) => values.sort((a, b) => a - b)[Math.floor(values.length * share)]!;
    return { read: at(reads, 0.5), estimate: at(estimates, 0.5), estimateP90: at(estimates, 0.9), count: reads.length };
  };

  it("keeps another source's reads and estimates within 10x of quiet (floor 50 ms)", async () => {
    const quietPool = victim();
    await victimMedians(quietPool, 500);
    const quiet = await victimMedians(quietPool, QUIET_MS);
    const flood = attacker();
    let on = true;
    const answered: string[] = [];
    let held = 0;
    const attack = async () => {
      while (on) {
        const reply = await post(flood, FLOOD);
        if (reply.status === 429) {
          held++;
          await new Promise((resolve) => setTimeout(resolve, 1_000 * reply.retryAfter));
        } else answered.push(reply.text);
      }
    };
    const attackers = Array.from({ length: 4 }, attack);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const loaded = await victimMedians(quietPool, ATTACK_MS);
    on = false;
    await Promise.all(attackers);
    await Promise.all([quietPool.close(), flood.close()]);
    console.log(
      `      quiet: read p50 ${quiet.read.toFixed(2)} ms, estimate p50 ${quiet.estimate.toFixed(2)} ms; under the flood: read ${loaded.read.toFixed(2)} ms, estimate ${loaded.estimate.toFixed(2)} ms, p90 ${loaded.estimateP90.toFixed(2)} ms (${loaded.count}); attacker ${answered.length} estimates answered, ${held} refusals waited out`,
    );
    // The flood ran: its estimates were computed (each failing: the loop outlasts any gas).
    expect(answered.length).to.be.greaterThan(0);
    expect(answered.every((text) => text.includes('gas estimation failed'))).to.equal(true);
    expect(loaded.read).to.be.at.most(Math.max(10 * quiet.read, 50));
    expect(loaded.estimate).to.be.at.most(Math.max(10 * quiet.estimate, 50));
  });
});
