import { expect } from 'chai';
import { thrown } from '../../helpers/refusals.js';
import { cachedRefusalOf, refusalError } from '../../../plugins/gate/answers.js';
import { ExecutionLayerRefusal, PoolBusy, Refusal, refuse, refuseFrame, Unavailable } from '../../../plugins/gate/errors.js';

describe('gate: errors, what its parts throw', () => {
  describe('refuse and refuseFrame (frame-transactions.md section 8: verify-rejected, with frame index and cause)', () => {
    it('refuse throws a Refusal whose message reads "<reason>: <detail>"', () => {
      const err = thrown(() => refuse('fee-order', 'max_priority_fee_per_gas exceeds max_fee_per_gas'));
      expect({ name: err.name, reason: err.reason, detail: err.detail, extra: err.extra, message: err.message }).to.deep.equal({
        name: 'Refusal',
        reason: 'fee-order',
        detail: 'max_priority_fee_per_gas exceeds max_fee_per_gas',
        extra: undefined,
        message: 'fee-order: max_priority_fee_per_gas exceeds max_fee_per_gas',
      });
    });

    it('refuseFrame puts the cause alone in data and the detail, in brackets, in the message only', () => {
      const err = thrown(() => refuseFrame(2, 'VERIFY', 'out of gas', 'the frame needs 2600, its limit is 100'));
      expect({ reason: err.reason, detail: err.detail, extra: err.extra }).to.deep.equal({
        reason: 'verify-rejected',
        detail: 'VERIFY frame 2: out of gas (the frame needs 2600, its limit is 100)',
        extra: { frame: 2, cause: 'out of gas' },
      });
      expect(refusalError(cachedRefusalOf(err, undefined), false)).to.deep.equal({
        code: -32000,
        message: 'rejected: VERIFY frame 2: out of gas (the frame needs 2600, its limit is 100)',
        data: { reason: 'verify-rejected', frame: 2, cause: 'out of gas' },
      });
    });

    it('refuseFrame without a detail names the deploy frame and its cause only', () => {
      expect(thrown(() => refuseFrame(0, 'deploy', 'no code at the sender after deploy')).message).to.equal(
        'verify-rejected: deploy frame 0: no code at the sender after deploy',
      );
    });

    it("ExecutionLayerRefusal is a Refusal with reason el-rejected and the EL's reason verbatim", () => {
      const err = new ExecutionLayerRefusal('verify-rejected: frame 0 reverted');
      expect(err).to.be.instanceOf(Refusal);
      expect({ reason: err.reason, detail: err.detail, elReason: err.elReason, message: err.message }).to.deep.equal({
        reason: 'el-rejected',
        detail: 'verify-rejected: frame 0 reverted',
        elReason: 'verify-rejected: frame 0 reverted',
        message: 'el-rejected: verify-rejected: frame 0 reverted',
      });
    });

    it('names Unavailable and PoolBusy, neither of them a Refusal', () => {
      const unavailable = new Unavailable('x');
      const busy = new PoolBusy('y');
      expect([unavailable.name, busy.name, unavailable instanceof Refusal, busy instanceof Refusal]).to.deep.equal([
        'Unavailable',
        'PoolBusy',
        false,
        false,
      ]);
    });
  });
});
