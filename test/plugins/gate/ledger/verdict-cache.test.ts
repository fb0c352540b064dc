import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { VerdictCache, type CachedRefusal } from '../../../../plugins/gate/ledger/verdict-cache.js';

const refusal = (reason: string, head?: bigint): CachedRefusal => ({ reason, detail: `${reason} detail`, byExecutionLayer: false, head });

describe('gate: verdict cache', () => {
  const cache = () => new VerdictCache({ duplicateWindowMs: 60_000, verdictTtlMs: 60_000, maxEntries: 3 });

  it('remembers admitted hashes as the duplicate window, and forgets one on request', () => {
    const verdicts = cache();
    verdicts.admit('0xa');
    expect([verdicts.isAdmitted('0xa'), verdicts.isAdmitted('0xb')]).to.deep.equal([true, false]);
    verdicts.forget('0xa');
    expect(verdicts.isAdmitted('0xa')).to.equal(false);
  });

  it('replays a refusal as it was stored, its head included, apart from admissions', () => {
    const verdicts = cache();
    verdicts.refuse('0xa', refusal('nonce-too-low', 7n));
    expect(verdicts.refusal('0xa')).to.deep.equal(refusal('nonce-too-low', 7n));
    expect(verdicts.isAdmitted('0xa')).to.equal(false);
    verdicts.refuse('0xa', refusal('sig-invalid'));
    expect(verdicts.refusal('0xa')).to.deep.equal(refusal('sig-invalid'));
  });

  it('holds at most maxEntries per map: the oldest makes room, a re-stored entry counts as new', () => {
    const verdicts = cache();
    for (const hash of ['0x1', '0x2', '0x3']) verdicts.admit(hash);
    verdicts.admit('0x1');
    verdicts.admit('0x4');
    expect(['0x1', '0x2', '0x3', '0x4'].map((hash) => verdicts.isAdmitted(hash))).to.deep.equal([true, false, true, true]);
    for (const hash of ['0x5', '0x6', '0x7', '0x8']) verdicts.refuse(hash, refusal('rlp-invalid'));
    expect(['0x5', '0x6', '0x7', '0x8'].map((hash) => verdicts.refusal(hash)?.reason)).to.deep.equal([
      undefined,
      'rlp-invalid',
      'rlp-invalid',
      'rlp-invalid',
    ]);
    // The two maps are bounded apart: refusals did not push admissions out.
    expect(verdicts.isAdmitted('0x4')).to.equal(true);
  });

  it('keeps a refusal that read 47 sender slots in at most 2 KB of heap (measured over 10,000)', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const sender = `0x${'11'.repeat(20)}`;
    const readingSlots = (n: number): CachedRefusal => ({
      ...refusal('verify-rejected', 100n),
      extra: { frame: 0, cause: 'out of gas' },
      dependencies: {
        accounts: [[sender, String(n), '1000000000000000000']],
        codes: [[sender, `0x${n.toString(16).padStart(64, '0')}`]],
        slots: Array.from({ length: 47 }, (_, i) => [
          sender,
          `0x${i.toString(16).padStart(64, '0')}`,
          `0x${(n + i).toString(16).padStart(64, '0')}`,
        ]),
      },
    });
    const verdicts = new VerdictCache({ duplicateWindowMs: 60_000, verdictTtlMs: 600_000, maxEntries: 20_000 });
    gc();
    const before = process.memoryUsage().heapUsed;
    // Each refusal as the simulation hands it over (~31 KB, garbage once stored).
    for (let n = 0; n < 10_000; n++) verdicts.refuse(`0x${n.toString(16).padStart(64, '0')}`, readingSlots(n));
    gc();
    const perRefusal = (process.memoryUsage().heapUsed - before) / 10_000;
    expect(perRefusal).to.be.within(500, 2_048);
    expect(verdicts.refusal(`0x${'0'.repeat(64)}`)?.dependencies).to.have.property('digest');
  });

  it('keeps what it remembers through new numbers: a shorter window brings expiries forward, fewer entries drop the oldest', async () => {
    const verdicts = new VerdictCache({ duplicateWindowMs: 60_000, verdictTtlMs: 60_000, maxEntries: 3 });
    for (const hash of ['0x1', '0x2', '0x3']) verdicts.admit(hash);
    verdicts.refuse('0xr', refusal('sig-invalid'));
    verdicts.retune({ duplicateWindowMs: 1, verdictTtlMs: 60_000, maxEntries: 2 });
    // 0x1 dropped for room; the others now expire within a millisecond.
    expect(verdicts.isAdmitted('0x1')).to.equal(false);
    expect(verdicts.refusal('0xr')).to.deep.equal(refusal('sig-invalid'));
    // The window is now a millisecond: past it, both are gone.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect([verdicts.isAdmitted('0x2'), verdicts.isAdmitted('0x3')]).to.deep.equal([false, false]);
    verdicts.retune({ duplicateWindowMs: 60_000, verdictTtlMs: 60_000, maxEntries: 2 });
    verdicts.admit('0x4');
    expect(verdicts.isAdmitted('0x4')).to.equal(true);
  });
});
