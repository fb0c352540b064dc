/**
 * Faults under load: while 32 clients keep calling, the EL is killed and restarted, and the
 * configuration is reloaded. Every request still gets exactly one complete answer, either the
 * EL's or the documented -32603, and service comes back by itself.
 */
import { expect } from 'chai';
import { Pool } from 'undici';
import { startAnvil, type Anvil } from '../../devnet/anvil.js';
import { parseConfig } from '../../src/config/load.js';
import { startIngressProcess } from '../../support/child.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const BODY = '{"jsonrpc":"2.0","id":3,"method":"eth_chainId","params":[]}';
const SERVED = '{"jsonrpc":"2.0","id":3,"result":"0x1fcd"}';
const UNAVAILABLE = '{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"upstream unavailable: the execution layer did not answer"}}';

describe('faults under load', function () {
  this.timeout(60_000);
  let anvil: Anvil;
  let ingress: TestIngress;

  before(async () => {
    anvil = await startAnvil();
    ingress = await startTestIngress(testConfig(anvil.url));
  });
  after(async () => {
    await ingress.shutdown();
    await anvil.stop();
  });

  /** Calls until `until` resolves, 32 at a time; tallies the answers by their exact bytes. */
  async function load(until: Promise<void>): Promise<Map<string, number>> {
    const pool = new Pool(ingress.url, { connections: 32, pipelining: 1 });
    const tally = new Map<string, number>();
    let done = false;
    void until.then(() => (done = true));
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (!done) {
          const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
          const text = await reply.body.text();
          tally.set(`${reply.statusCode} ${text}`, (tally.get(`${reply.statusCode} ${text}`) ?? 0) + 1);
        }
      }),
    );
    await pool.close();
    return tally;
  }

  it('answers every call, -32603 while the EL is gone, and recovers when it restarts on its port', async () => {
    const port = anvil.port;
    const tally = await load(
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        await anvil.stop();
        await new Promise((resolve) => setTimeout(resolve, 300));
        anvil = await startAnvil({ port });
        await new Promise((resolve) => setTimeout(resolve, 300));
      })(),
    );
    const answers = [...tally.keys()];
    expect(
      answers.every((a) => a === `200 ${SERVED}` || a === `200 ${UNAVAILABLE}`),
      answers.join('\n'),
    ).to.equal(true);
    expect(tally.get(`200 ${SERVED}`)).to.be.greaterThan(0);
    expect(tally.get(`200 ${UNAVAILABLE}`)).to.be.greaterThan(0);
    const after = await load(new Promise((resolve) => setTimeout(resolve, 200)));
    expect([...after.keys()]).to.deep.equal([`200 ${SERVED}`]);
  });

  it('reloads its configuration under load without failing a call', async () => {
    const tally = await load(
      (async () => {
        for (let i = 0; i < 5; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          await ingress.reload(parseConfig(testConfig(anvil.url)));
        }
      })(),
    );
    expect([...tally.keys()]).to.deep.equal([`200 ${SERVED}`]);
  });
});

describe('SIGTERM under load', function () {
  this.timeout(60_000);

  it('answers every request it accepted in full, refuses the rest at the transport, and exits 0', async () => {
    const anvil = await startAnvil();
    const ingress = await startIngressProcess(testConfig(anvil.url).replace('log_level: debug', 'log_level: info'));
    const pool = new Pool(ingress.url, { connections: 32, pipelining: 1 });
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    let stopped = false;
    void ingress.exited.then(() => (stopped = true));
    try {
      const clients = Array.from({ length: 32 }, async () => {
        while (!stopped) {
          try {
            const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
            count(`${reply.statusCode} ${await reply.body.text()}`);
          } catch (err) {
            // Never accepted (the listener is closed) or cut between two requests of a keep-alive
            // connection: the request was not processed, and the client knows it.
            count(`transport ${(err as { code?: string }).code}`);
          }
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      ingress.child.kill('SIGTERM');
      expect(await ingress.exited).to.equal(0);
      await Promise.all(clients);
    } finally {
      await pool.destroy();
      await anvil.stop();
    }
    const kinds = [...outcomes.keys()];
    expect(outcomes.get(`200 ${SERVED}`)).to.be.greaterThan(0);
    for (const kind of kinds) {
      expect(kind === `200 ${SERVED}` || /^transport (ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET)$/.test(kind), kinds.join('\n')).to.equal(
        true,
      );
    }
  });
});
