import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '../../src/config/load.js';
import { rpc } from '../../support/http.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { within } from '../../support/within.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { until } from '../helpers/until.js';

/** How long a call the EL should not have received yet is given to arrive anyway. */
const ABSENCE_WINDOW_MS = 300;

describe('runtime: a reload hands the gas-heavy reads on', () => {
  let el: StubEl;
  let ingress: TestIngress;
  /** Releases the EL's answer to each eth_call received, in order; resolved as each arrives. */
  const calls: Array<{ release: () => void }> = [];
  let arrived: (() => void) | undefined;
  const nextArrival = () => new Promise<void>((resolve) => (arrived = resolve));

  const withHeavyConnections = (count: number) =>
    testConfig(el.url, '\n  - allowlist\n').replace(
      '  headers_timeout_ms: 2000',
      `  headers_timeout_ms: 2000\n  heavy_connections: ${count}`,
    );
  const ethCall = (id: number) => rpc(ingress.url, 'eth_call', [{ to: `0x${'de'.repeat(20)}` }, 'latest'], id);
  const reloaded = () =>
    until(
      async () => ingress.logs.filter((line) => line.includes('configuration reloaded')).length,
      (n) => n > 0,
      'the reload',
    );

  beforeEach(async () => {
    calls.length = 0;
    el = await startStubEl({
      eth_call: async (id) => {
        const answered = new Promise<void>((resolve) => calls.push({ release: resolve }));
        arrived?.();
        await answered;
        return JSON.stringify({ jsonrpc: '2.0', id, result: '0x' });
      },
    });
  });
  afterEach(async () => {
    for (const call of calls) call.release();
    await ingress?.shutdown();
    await el?.close();
  });

  /** A call held at the EL on `before` heavy connections, then a reload to `after`; the second call's fate. */
  const reloadWithOneRunning = async (before: number, after: number) => {
    ingress = await startTestIngress(withHeavyConnections(before));
    let arrival = nextArrival();
    const first = ethCall(1);
    await within(2_000, 'the EL receives the first call', arrival);
    const reload = ingress.reload(parseConfig(withHeavyConnections(after)));
    await reloaded();
    arrival = nextArrival();
    const second = ethCall(2);
    const secondArrivedAtOnce = await Promise.race([arrival.then(() => true), sleep(ABSENCE_WINDOW_MS).then(() => false)]);
    if (!secondArrivedAtOnce) {
      calls[0]!.release();
      expect((await first).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x"}');
      await within(2_000, 'the EL receives the second call once the first is answered', arrival);
    }
    for (const call of calls) call.release();
    expect((await second).text).to.equal('{"jsonrpc":"2.0","id":2,"result":"0x"}');
    expect((await first).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x"}');
    await reload;
    return { secondArrivedAtOnce };
  };

  it("counts a call still running on the old runtime against the new one's heavy_connections, its pool handed on", async () => {
    expect(await reloadWithOneRunning(1, 1)).to.deep.equal({ secondArrivedAtOnce: false });
    // The old runtime has retired; the pool it handed on still serves.
    const arrival = nextArrival();
    const third = ethCall(3);
    await within(2_000, 'the EL receives a call after the old runtime retired', arrival);
    calls[2]!.release();
    expect((await third).text).to.equal('{"jsonrpc":"2.0","id":3,"result":"0x"}');
  });

  it('lets a second call run beside it once a reload raises heavy_connections', async () => {
    expect(await reloadWithOneRunning(1, 2)).to.deep.equal({ secondArrivedAtOnce: true });
  });

  it('holds a second call back when a reload lowers heavy_connections to what is running', async () => {
    expect(await reloadWithOneRunning(2, 1)).to.deep.equal({ secondArrivedAtOnce: false });
  });
});
