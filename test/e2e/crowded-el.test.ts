/**
 * An EL crowded by others (another proxy, its own block import) answers every call late alike:
 * here a fake EL answers each `eth_call` after 2 to 80 ms, a third of them past `quick_call_ms`
 * (50). One source's cheap calls must keep running side by side on the quick lane, not go to
 * the heavy lane one at a time (src/el-turns.ts): before 4109a25 two answers past 50 ms sent it
 * there, and side by side with a proxy crowding anvil the ingress fell to 11-40% of its rate.
 */
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { rpc } from '../../support/http.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

/** The EL's answer times, in turn: 8 of 12 within 50 ms, a cheap view's least 2 ms (a tiny call). */
const CROWDED_MS = [2, 5, 10, 15, 20, 30, 40, 45, 55, 65, 75, 80];
const CLIENTS = 32;
const VIEW = [{ to: '0x00000000000000000000000000000000000000aa', data: '0x70a08231' }, 'latest'];
const ANSWER = '0x0000000000000000000000000000000000000000000000000000000000000001';

describe('a crowded EL: a source’s cheap calls stay on the quick lane while every answer is late', function () {
  this.timeout(30_000);
  let el: StubEl;
  let ingress: TestIngress;
  let next = 0;

  before(async () => {
    el = await startStubEl({
      eth_chainId: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0x1fcd' }),
      eth_call: async (id) => {
        await sleep(CROWDED_MS[next++ % CROWDED_MS.length]!);
        return JSON.stringify({ jsonrpc: '2.0', id, result: ANSWER });
      },
    });
    const yaml = testConfig(el.url).replace(
      'body_timeout_ms: 2000',
      'body_timeout_ms: 2000\n  heavy_connections: 1\n  quick_connections: 1',
    );
    ingress = await startTestIngress(yaml);
  });
  after(async () => {
    await ingress.shutdown();
    await el.close();
  });

  /** Gasless calls to one view from `CLIENTS` clients of one address, each waiting on its answer, until `until`. */
  async function load(until: number): Promise<{ answered: number; other: string[] }> {
    let answered = 0;
    const other: string[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < until) {
          const { text } = await rpc(ingress.url, 'eth_call', VIEW, 7);
          if (text === `{"jsonrpc":"2.0","id":7,"result":"${ANSWER}"}`) answered++;
          else other.push(text);
        }
      }),
    );
    return { answered, other };
  }

  it('answers 32 clients about as fast as the EL answers 32 calls at once, not one call at a time', async () => {
    // The target learned and the quick lane's window grown.
    await load(Date.now() + 2_000);
    const measured = await load(Date.now() + 3_000);
    // Each call ~37 ms on the EL: one at a time is ~80 answers in 3 s, 32 at once ~2,500.
    console.log(`      answered in 3 s: ${measured.answered} (one at a time: ~80)`);
    expect(measured.other).to.deep.equal([]);
    expect(measured.answered).to.be.above(1_000);
  });
});
