import { expect } from 'chai';
import { VerdictCache, type CachedRefusal } from '../../../plugins/gate/verdict-cache.js';

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
});
