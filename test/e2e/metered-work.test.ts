/**
 * Issue 25, row N1: a source pays for the time its submissions hold the gate's worker pool, and
 * one source inside its quota cannot take the pool away from the others.
 *
 * - The charge: a judgement whose compute outran its price (VERIFY code STATICCALLing a 24 KB
 *   contract until the simulation budget stops it) leaves the source in debt, refused even a
 *   one-token transfer; another source is served; time a simulation spent waiting for a slow EL
 *   is not charged.
 * - The victim suite: the ingress as its own process (the shipped production chain, real anvil,
 *   a recording submission target) while sources flood VERIFY code that STATICCALLs a 24,576-byte
 *   contract in a loop (the dearest prefix measured), each at its sustained quota (a first burst of five, then one a second):
 *   another source's ML-DSA-65 transfers (from eight addresses in turn, each within its quota) stay admitted, p90 within 3x their own baseline with
 *   one attacker, under 2 s with twelve; and once the attackers disconnect the ingress is idle
 *   within 3 s (their queued work is dropped unrun). The figures are printed.
 */
import { expect } from 'chai';
import { keccak256, Wallet } from 'ethers';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, Pool } from 'undici';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import {
  cpuEachSecond,
  floodCostlyVerify,
  fundedMldsaTransfers,
  p90,
  placeCostlyAccounts,
  smartTransfer,
  submitFrom,
  victimLatencies,
} from '../../support/costly-verify.js';
import { call } from '../../support/http.js';
import { DEV_KEY } from '../../support/keys.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { startSubmitTarget, type SubmitTarget } from '../../support/submit-target.js';
import { APPROVE_3, bigContract, staticCallLoop } from '../../support/verify-code.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const ONE_ETH = '0xde0b6b3a7640000';

describe('metered work: a source is charged the compute its judgement measured', function () {
  this.timeout(30_000);
  const anvil = useAnvil();
  /** APPROVE(3), but the EL takes 300 ms to serve its code: the simulation waits for it. */
  const SLOW = '0x00000000000000000000000000000000000051a0';
  const SLOW_TOO = '0x00000000000000000000000000000000000051a1';
  /** STATICCALLs of a 24 KB contract in a loop: 100+ ms of compute for 99,000 gas, until the 30 ms budget stops it. */
  const LOOPS = '0x00000000000000000000000000000000000100b5';
  const BIG = '0x00000000000000000000000000000000000b1600';
  const FAST = '0x000000000000000000000000000000000000fa57';
  let el: StubEl;
  let target: SubmitTarget;
  let ingress: TestIngress;
  const agents = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'].map((localAddress) => new Agent({ localAddress }));
  const admitted = (raw: string) => ({ status: 200, answer: { jsonrpc: '2.0', id: 1, result: keccak256(raw) } });

  before(async () => {
    el = await startStubEl(
      {
        eth_getCode: async (_id, params) => {
          if ([SLOW, SLOW_TOO].includes((params as string[])[0]?.toLowerCase() ?? '')) await sleep(300);
          return undefined;
        },
      },
      { fallthrough: anvil.current.url },
    );
    for (const [account, code] of [
      [SLOW, APPROVE_3],
      [SLOW_TOO, APPROVE_3],
      [LOOPS, staticCallLoop(BIG)],
      [BIG, bigContract(0)],
      [FAST, APPROVE_3],
    ] as const) {
      await call(anvil.current.url, 'anvil_setCode', [account, code]);
      await call(anvil.current.url, 'anvil_setBalance', [account, ONE_ETH]);
    }
    await call(anvil.current.url, 'evm_mine', []);
    target = await startSubmitTarget();
    ingress = await startTestIngress(
      testConfig(
        el.url,
        `
  - allowlist
  - rate-limit:
      submissions:
        per_source: {rate_per_second: 1, burst: 11}
  - gate:
      head_cache_ms: 0
      threads: 1
      simulation_budget_ms: 30
`,
      ).replace(`execution: ${el.url}`, `execution: ${el.url}\n  submit: ${target.url}`),
    );
    // A first simulation also pays for the thread's first run of the EVM's code (compiled as it
    // runs): made here, by a source of its own.
    const warm = smartTransfer(FAST, 50_000n, 0);
    expect(await submitFrom(agents[3]!, ingress.url, warm)).to.deep.equal(admitted(warm));
  });
  after(async () => {
    await ingress?.shutdown();
    await Promise.all([target?.close(), el?.close(), ...agents.map((agent) => agent.close())]);
  });

  it('does not charge a source for the time its simulation waited for the EL', async () => {
    // 50,000 gas of VERIFY: five tokens each, of 11; each simulation waited 300+ ms for the EL.
    for (const raw of [smartTransfer(SLOW, 50_000n, 1), smartTransfer(SLOW_TOO, 50_000n, 2)]) {
      expect(await submitFrom(agents[0]!, ingress.url, raw)).to.deep.equal(admitted(raw));
    }
  });

  it('leaves the source in debt for the compute that outran its price, and serves another source', async () => {
    // 99,000 gas of VERIFY: ten tokens up front (25 ms of a thread); the simulation computed 30 ms
    // before the budget stopped it: 12 tokens, and the rest of the thread's time, owed.
    const loops = await submitFrom(agents[1]!, ingress.url, smartTransfer(LOOPS, 99_000n, 3));
    expect(loops.answer.error?.data).to.deep.equal({ reason: 'verify-rejected', frame: 0, cause: 'over the simulation budget' });
    // One token was left: a transfer, which costs one, finds the bucket in debt.
    const transfer = await new Wallet(DEV_KEY).signTransaction({
      chainId: 8141,
      nonce: 0,
      to: FAST,
      value: 1n,
      gasLimit: 21_000,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 0n,
      type: 2,
    });
    const again = await submitFrom(agents[1]!, ingress.url, transfer);
    expect(again.status).to.equal(429);
    expect(again.answer.error?.code).to.equal(-32005);
    expect(again.answer.error?.message).to.equal('rate limited: too many requests from this source; retry later');
    expect(again.answer.error?.data?.retry_after_ms).to.be.within(1_000, 61_001);
    expect(await submitFrom(agents[2]!, ingress.url, transfer)).to.deep.equal(admitted(transfer));
  });
});

describe('metered work: another source is served while sources flood costly VERIFY code at their quota', function () {
  this.timeout(180_000);
  const anvil = useAnvil();
  const ATTACKERS = 12;
  let target: SubmitTarget;
  let ingress: IngressProcess;
  /** The victim's transfers go from eight addresses in turn: each stays within its own quota. */
  let victims: Pool[];

  before(async () => {
    await placeCostlyAccounts(anvil.current.url, ATTACKERS);
    target = await startSubmitTarget();
    process.env.SVC_METERED_TOKEN = 'metered-test-operator-token-0123';
    const yaml = readFileSync('config/ingress.yaml', 'utf8')
      .replace('listen: 127.0.0.1:8545', 'listen: 127.0.0.1:0')
      .replace('metrics_listen: 127.0.0.1:9645', '')
      .replace('execution: http://127.0.0.1:18545', `execution: ${anvil.current.url}`)
      .replace('submit: http://127.0.0.1:9651', `submit: ${target.url}`)
      .replace('node: http://127.0.0.1:9651', `node: ${anvil.current.url}`)
      .replace('token_file: /etc/svc-ingress/operator-token', 'token_env: SVC_METERED_TOKEN');
    ingress = await startIngressProcess(yaml);
    victims = Array.from({ length: 8 }, (_, i) => new Pool(ingress.url, { connections: 1, localAddress: `127.0.0.${100 + i}` }));
  });
  after(async () => {
    await Promise.all((victims ?? []).map((pool) => pool.close()));
    ingress?.child.kill('SIGTERM');
    await ingress?.exited;
    await target?.close();
  });

  it('keeps admitting the victim within 3x its baseline (one attacker) and 2 s (twelve), and is idle 3 s after they leave', async () => {
    const transfers = (count: number) => fundedMldsaTransfers(anvil.current.url, count);
    // The first starts the pool's threads: not part of the baseline.
    await victimLatencies(victims, ingress.url, await transfers(1));
    const baseline = await victimLatencies(victims, ingress.url, await transfers(12));
    const attacked = await transfers(24);

    // Twelve transfers over six seconds under each flood.
    const one = floodCostlyVerify(ingress.url, 1);
    const underOne = await victimLatencies(victims, ingress.url, attacked.slice(0, 12), 500);
    await one.stop();

    const twelve = floodCostlyVerify(ingress.url, ATTACKERS);
    const underTwelve = await victimLatencies(victims, ingress.url, attacked.slice(12), 500);
    await twelve.stop();
    const seconds = await cpuEachSecond(ingress.child.pid!, 3);

    console.log(
      `      victim ML-DSA-65 p90: baseline ${p90(baseline).toFixed(0)} ms, one attacker ${p90(underOne).toFixed(0)} ms, ` +
        `twelve ${p90(underTwelve).toFixed(0)} ms; CPU each second after they left: ${seconds.map((s) => s.toFixed(2)).join(', ')} s\n` +
        `      one attacker: ${JSON.stringify([...one.outcomes])}\n      twelve: ${JSON.stringify([...twelve.outcomes])}`,
    );
    expect(p90(underOne)).to.be.at.most(3 * p90(baseline));
    expect(p90(underTwelve)).to.be.below(2_000);
    // Idle: a fifth of a core at most over the three seconds (before issue 25: ~90% for about five
    // minutes). Not each second: one of them takes 0.01-0.21 s off the main thread, whose profile
    // is idle meanwhile (likely the collection of what the flood allocated).
    const mean = seconds.reduce((sum, s) => sum + s, 0) / seconds.length;
    expect(mean, 'CPU seconds a second, in the three after the attackers left').to.be.below(0.2);
    expect([...one.outcomes.keys(), ...twelve.outcomes.keys()].filter((what) => what.startsWith('5'))).to.deep.equal([]);
  });
});
