/**
 * Submissions under concurrency: the same bytes sent 50 times at once, and 40 distinct transfers
 * at once, through the running ingress. Each transaction reaches the submission target exactly
 * once; every copy gets either its hash (once) or "already known".
 */
import { expect } from 'chai';
import { keccak256, Wallet } from 'ethers';
import { rpc } from '../../../support/http.js';
import { DEV_KEYS } from '../../../support/keys.js';
import { useTappedIngress } from '../../helpers/tap.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const sign = (key: string, nonce: number) =>
  new Wallet(key).signTransaction({
    chainId: 8141,
    nonce,
    to: RECIPIENT,
    value: 1n,
    gasLimit: 21_000,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 0n,
    type: 2,
  });

describe('gate: nothing lost, nothing forwarded twice', () => {
  // All from one source at once: with the pure-JS crypto, senders are recovered in the pool,
  // whose per-source queue would refuse most of them for later (-32005); here it takes them all.
  const suite = useTappedIngress(`
  - batch-refuse
  - size-limit
  - allowlist
  - gate:
      head_cache_ms: 0
      queue_per_source: 64`);
  const forwarded = () => suite.tap.bodies.filter((b) => b.includes('"eth_sendRawTransaction"'));

  it('forwards 50 simultaneous copies of one transaction once, answering the rest "already known"', async () => {
    const raw = await sign(DEV_KEYS[1], 0);
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => JSON.parse((await rpc(suite.ingress.url, 'eth_sendRawTransaction', [raw])).text)),
    );
    const admitted = answers.filter((a) => a.result === keccak256(raw));
    const known = answers.filter((a) => a.error?.message === 'already known');
    expect(admitted).to.have.length(1);
    expect(known).to.have.length(49);
    expect(forwarded()).to.have.length(1);
  });

  it('forwards each of 40 simultaneous distinct transactions exactly once', async () => {
    const raws = await Promise.all(Array.from({ length: 40 }, (_, i) => sign(DEV_KEYS[2 + (i % 3)]!, Math.floor(i / 3))));
    const answers = await Promise.all(
      raws.map(async (raw) => JSON.parse((await rpc(suite.ingress.url, 'eth_sendRawTransaction', [raw])).text)),
    );
    // Distinct senders' nonces 0..13: some go beyond what the in-flight cap and nonce order
    // allow at this instant; whatever is admitted is forwarded once, whatever is refused never.
    const admittedRaws = raws.filter((raw, i) => answers[i].result === keccak256(raw));
    expect(admittedRaws.length).to.be.greaterThan(0);
    const sent = forwarded().map((b) => (JSON.parse(b) as { params: string[] }).params[0]);
    expect([...sent].sort()).to.deep.equal([...admittedRaws].sort());
    for (const [i, answer] of answers.entries()) {
      if (!('result' in answer)) expect(answer.error.code, JSON.stringify(answer)).to.equal(-32000);
      else expect(answer.result).to.equal(keccak256(raws[i]!));
    }
  });
});
