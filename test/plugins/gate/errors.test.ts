import { expect } from 'chai';
import type { StateDependencies } from '../../../plugins/gate/dependencies.js';
import {
  answerFor,
  cachedRefusalOf,
  ExecutionLayerRefusal,
  PoolBusy,
  Refusal,
  refusalError,
  refuse,
  refuseFrame,
  Unavailable,
} from '../../../plugins/gate/errors.js';
import type { CachedRefusal } from '../../../plugins/gate/verdict-cache.js';
import { errors, RpcFailure } from '../../../src/errors.js';

/** What `fn` threw, which must be a Refusal. */
function thrown(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (err) {
    if (err instanceof Refusal) return err;
    throw err;
  }
  throw new Error('nothing was thrown');
}

const DEPENDENCIES: StateDependencies = {
  accounts: [[`0x${'11'.repeat(20)}`, '7', '1000']],
  codes: [[`0x${'11'.repeat(20)}`, '0x']],
  slots: [],
};

describe('gate: errors, and the one place they become wire answers', () => {
  describe('answerFor', () => {
    it('answers a full worker pool (PoolBusy) as the host-wide -32005, HTTP 429, retry after 1 s', () => {
      expect(answerFor(new PoolBusy('queue full'))).to.deep.equal({
        error: {
          code: -32005,
          message: 'rate limited: the endpoint is at capacity; retry later',
          data: { retry_after_ms: 1_000 },
          httpStatus: 429,
          retryAfterMs: 1_000,
        },
      });
    });

    it('answers an unreadable EL (Unavailable) as -32603 "validation unavailable", keeping its detail out of the answer', () => {
      expect(answerFor(new Unavailable('eth_getBalance: ECONNREFUSED 10.0.0.3:8545'))).to.deep.equal({
        error: { code: -32603, message: 'validation unavailable: the ingress could not reach its execution layer' },
      });
    });

    for (const [label, err] of [
      ['a Refusal (the caller words it)', new Refusal('nonce-too-low', 'nonce 3 is below 4')],
      ['an ExecutionLayerRefusal', new ExecutionLayerRefusal('invalid')],
      ['an RpcFailure (the server answers its own rpc)', new RpcFailure(errors.submissionUnavailable())],
      ['a plain Error (a bug)', new TypeError('x is undefined')],
      ['a thrown string', 'boom'],
    ] as const) {
      it(`has no answer for ${label}`, () => {
        expect(answerFor(err)).to.equal(undefined);
      });
    }
  });

  describe('refusalError: -32000 with a stable reason in data (spec 7)', () => {
    const own: CachedRefusal = {
      reason: 'nonce-too-low',
      detail: 'nonce 3 is below the account nonce 4',
      byExecutionLayer: false,
      head: 9n,
    };

    it('first given: "rejected: <detail>", data {reason}', () => {
      expect(refusalError(own, false)).to.deep.equal({
        code: -32000,
        message: 'rejected: nonce 3 is below the account nonce 4',
        data: { reason: 'nonce-too-low' },
      });
    });

    it('replayed: marked as a cached verdict, in the message and in data', () => {
      expect(refusalError(own, true)).to.deep.equal({
        code: -32000,
        message: 'rejected: nonce 3 is below the account nonce 4 (cached verdict)',
        data: { reason: 'nonce-too-low', cached: true },
      });
    });

    it("carries a VERIFY refusal's frame and cause in data beside the reason", () => {
      const verify: CachedRefusal = {
        reason: 'verify-rejected',
        detail: 'VERIFY frame 1: reverted',
        extra: { frame: 1, cause: 'reverted' },
        byExecutionLayer: false,
        head: 9n,
      };
      expect([refusalError(verify, false), refusalError(verify, true)]).to.deep.equal([
        { code: -32000, message: 'rejected: VERIFY frame 1: reverted', data: { reason: 'verify-rejected', frame: 1, cause: 'reverted' } },
        {
          code: -32000,
          message: 'rejected: VERIFY frame 1: reverted (cached verdict)',
          data: { reason: 'verify-rejected', frame: 1, cause: 'reverted', cached: true },
        },
      ]);
    });

    it('words an EL refusal as "rejected by the execution layer: <its text>", reason el-rejected', () => {
      const el: CachedRefusal = {
        reason: 'el-rejected',
        detail: 'insufficient funds for gas * price + value',
        byExecutionLayer: true,
        head: 9n,
      };
      expect([refusalError(el, false), refusalError(el, true)]).to.deep.equal([
        {
          code: -32000,
          message: 'rejected by the execution layer: insufficient funds for gas * price + value',
          data: { reason: 'el-rejected' },
        },
        {
          code: -32000,
          message: 'rejected by the execution layer: insufficient funds for gas * price + value (cached verdict)',
          data: { reason: 'el-rejected', cached: true },
        },
      ]);
    });
  });

  describe('cachedRefusalOf: what the ledger keeps of a refusal', () => {
    it("keeps the reason, detail and head of the gate's own refusal", () => {
      expect(cachedRefusalOf(new Refusal('payer-balance', 'balance 0'), 12n)).to.deep.equal({
        reason: 'payer-balance',
        detail: 'balance 0',
        extra: undefined,
        byExecutionLayer: false,
        head: 12n,
      });
    });

    it('keeps no head for a refusal that rests on no state', () => {
      expect(cachedRefusalOf(new Refusal('rlp-invalid', 'not RLP'), undefined).head).to.equal(undefined);
    });

    it("marks an EL refusal, with the EL's text as its detail", () => {
      expect(cachedRefusalOf(new ExecutionLayerRefusal('nonce too low'), 3n)).to.deep.equal({
        reason: 'el-rejected',
        detail: 'nonce too low',
        extra: undefined,
        byExecutionLayer: true,
        head: 3n,
      });
    });

    it("keeps a validation-prefix refusal's frame, cause and dependencies", () => {
      const err = thrown(() => refuseFrame(1, 'VERIFY', 'reverted', 'the payer cannot cover the maximum cost'));
      err.dependencies = DEPENDENCIES;
      expect(cachedRefusalOf(err, 5n)).to.deep.equal({
        reason: 'verify-rejected',
        detail: 'VERIFY frame 1: reverted (the payer cannot cover the maximum cost)',
        extra: { frame: 1, cause: 'reverted' },
        byExecutionLayer: false,
        head: 5n,
        dependencies: DEPENDENCIES,
      });
    });

    it('replays, through refusalError, the wire error first given', () => {
      const err = thrown(() => refuseFrame(0, 'deploy', 'no code at the sender after deploy'));
      expect(refusalError(cachedRefusalOf(err, 5n), true)).to.deep.equal({
        code: -32000,
        message: 'rejected: deploy frame 0: no code at the sender after deploy (cached verdict)',
        data: { reason: 'verify-rejected', frame: 0, cause: 'no code at the sender after deploy', cached: true },
      });
    });
  });

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
