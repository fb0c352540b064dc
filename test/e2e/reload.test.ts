/**
 * Issue 25 row N9: a SIGHUP reload keeps what the running chain knows. The real command, a real
 * anvil behind it and a recording submission target: an admitted transaction is not forwarded
 * again after a reload, a drained source is still limited, and a bucket whose numbers change is
 * clamped to the new burst, not refilled.
 */
import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { writeFileSync } from 'node:fs';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { postFresh } from '../../support/http.js';
import { DEV_KEYS, devTransfer } from '../../support/keys.js';
import { startSubmitTarget, type SubmitTarget } from '../../support/submit-target.js';
import { useAnvil } from '../helpers/el.js';
import { testConfig } from '../helpers/ingress.js';

const call = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const BALANCE = call('eth_getBalance', ['0x000000000000000000000000000000000000dEaD', 'latest']);

/** eth_getBalance costs 10 of a bucket refilling 1 a second: a reload's second never buys a call. */
const plugins = (burst: number, duplicateWindowMs = 60_000) => `
  - allowlist
  - rate-limit:
      reads:
        per_source: {rate_per_second: 1, burst: ${burst}}
        method_costs: {eth_getBalance: 10}
  - gate:
      head_cache_ms: 0
      threads: 1
      duplicate_window_ms: ${duplicateWindowMs}`;

for (const workers of [1, 2]) describeReload(workers);

/** The suite for one process (`workers: 1`: in-memory state) or `workers: 2` (state in the primary). */
function describeReload(workers: number): void {
  describe(`reload keeps state (SIGHUP, workers: ${workers})`, function () {
    this.timeout(60_000);
    const anvil = useAnvil();
    /** Sources of this suite's own (127.0.<workers>.x). */
    const at = (host: number) => `127.0.${workers}.${host}`;
    let target: SubmitTarget;
    let ingress: IngressProcess;
    const yaml = (burst: number, duplicateWindowMs?: number) =>
      testConfig(anvil.current.url, plugins(burst, duplicateWindowMs), `workers: ${workers}`).replace(
        `execution: ${anvil.current.url}`,
        `execution: ${anvil.current.url}\n  submit: ${target.url}`,
      );

    before(async () => {
      target = await startSubmitTarget();
      ingress = await startIngressProcess(yaml(100));
    });
    after(async () => {
      if (ingress !== undefined && ingress.child.exitCode === null) {
        ingress.child.kill('SIGTERM');
        expect(await ingress.exited).to.equal(0);
      }
      await target?.close();
    });

    /** Writes `burst` into the file (unchanged if it is the running one), sends SIGHUP, waits for the swap. */
    async function reload(burst: number, duplicateWindowMs?: number): Promise<void> {
      writeFileSync(ingress.configPath, yaml(burst, duplicateWindowMs));
      const from = ingress.lines.length;
      ingress.child.kill('SIGHUP');
      // Each worker reloads and says so.
      const reloaded = () => ingress.lines.slice(from).filter((line) => line.includes('"configuration reloaded"')).length;
      while (reloaded() < workers) await ingress.waitForLog(/./, ingress.lines.length);
    }

    /** How many eth_getBalance calls `source` gets through before its first 429 (at most `upTo`). */
    async function callsUntilLimited(source: string, upTo: number): Promise<number> {
      for (let i = 0; i < upTo; i++) {
        const { status, json } = await postFresh(ingress.url, BALANCE, source);
        if (status === 429) {
          expect(json.error.code).to.equal(-32005);
          return i;
        }
        expect(json.result, JSON.stringify(json)).to.be.a('string');
      }
      return upTo;
    }

    it('answers "already known" for a transaction admitted before an unchanged reload, forwarding it once', async () => {
      const raw = await devTransfer(DEV_KEYS[2 + workers]!, 0);
      const submit = call('eth_sendRawTransaction', [raw]);
      expect((await postFresh(ingress.url, submit, at(21))).json.result).to.equal(keccak256(raw));
      await reload(100);
      expect((await postFresh(ingress.url, submit, at(21))).json.error).to.deep.equal({ code: -32000, message: 'already known' });
      expect(target.received).to.deep.equal([raw]);
    });

    it("keeps the duplicate window through a reload that changes the gate's numbers", async () => {
      const raw = await devTransfer(DEV_KEYS[2 + workers]!, 1);
      const submit = call('eth_sendRawTransaction', [raw]);
      expect((await postFresh(ingress.url, submit, at(22))).json.result).to.equal(keccak256(raw));
      await reload(100, 120_000);
      expect((await postFresh(ingress.url, submit, at(22))).json.error).to.deep.equal({ code: -32000, message: 'already known' });
      expect(target.received.filter((forwarded) => forwarded === raw)).to.have.length(1);
      await reload(100);
    });

    it('keeps a drained source limited across an unchanged reload', async () => {
      expect(await callsUntilLimited(at(22), 20)).to.equal(10);
      await reload(100);
      expect((await postFresh(ingress.url, BALANCE, at(22))).status).to.equal(429);
    });

    it('clamps a bucket to a smaller burst on reload, keeping what the source had left rather than refilling it', async () => {
      // 70 of 100 tokens spent: 30 left (a second's drip adds 1, not a call's 10).
      expect(await callsUntilLimited(at(23), 7)).to.equal(7);
      // A source not seen yet, for reference: the new burst of 50, five calls.
      await reload(50);
      expect(await callsUntilLimited(at(23), 10)).to.equal(3);
      expect(await callsUntilLimited(at(24), 10)).to.equal(5);
      // And a larger burst does not top a spent bucket up either.
      await reload(200);
      expect((await postFresh(ingress.url, BALANCE, at(23))).status).to.equal(429);
    });
  });
}
