/** The examples README sends newcomers to, run as they run them against a devnet. */
import { expect } from 'chai';
import { startDevnet, type Devnet } from '../../devnet/devnet.js';
import { createLogger } from '../../src/log.js';
import { runScript } from '../../support/child.js';
import { call } from '../../support/http.js';
import { OPERATOR_TOKEN } from '../helpers/ingress.js';

describe('examples: an ML-DSA-65 account and a smart account send value on the devnet', () => {
  let devnet: Devnet;

  before(async function () {
    this.timeout(30_000);
    process.env.SVC_OPERATOR_TOKEN = OPERATOR_TOKEN;
    devnet = await startDevnet({ port: 0, metricsPort: 0, node: { commitIntervalMs: 40, blockIntervalMs: 200 } }, createLogger('error'));
  });
  after(() => devnet?.stop());

  for (const [script, sender] of [
    ['mldsa-transfer.js', 'sender   '],
    ['contract-account-transfer.js', 'account  '],
  ] as const) {
    it(`${script}: funds, sends, and prints a receipt with status 1 and the balances that moved`, async function () {
      this.timeout(60_000);
      const { code, out } = await runScript(`examples/${script}`, { RPC_URL: devnet.ingress.url, MLDSA_SEED: `examples test ${script}` });
      expect(code, out).to.equal(0);
      const hash = /frame transaction (0x[0-9a-f]{64})/.exec(out)?.[1];
      const recipient = /sending 0\.001 ETH to (0x[0-9a-f]{40})/.exec(out)?.[1];
      expect(out).to.include('  status 1 in block').and.include('frame 1: status 1, execution gas 2600, state gas 183600');
      expect(out).to.match(new RegExp(`  ${sender} 1\\.0 -> 0\\.998\\d+ ETH`));
      expect(out).to.include('  recipient 0.0 -> 0.001 ETH');
      // What it printed is what the chain says.
      const receipt = await call<{ status: string; payer: string }>(devnet.ingress.url, 'eth_getTransactionReceipt', [hash]);
      expect(receipt.status).to.equal('0x1');
      expect(out).to.include(`payer ${receipt.payer}`);
      expect(await call(devnet.ingress.url, 'eth_getBalance', [recipient, 'latest'])).to.equal('0x38d7ea4c68000');
    });
  }
});
