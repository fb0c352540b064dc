import { expect } from 'chai';
import { thrown } from '../../helpers/refusals.js';
import { answerFor, cachedRefusalOf, refusalError } from '../../../plugins/gate/answers.js';
import type { StateDependencies } from '../../../plugins/gate/head/dependencies.js';
import { ExecutionLayerRefusal, PoolBusy, Refusal, refuseFrame, Unavailable } from '../../../plugins/gate/errors.js';
import type { CachedRefusal } from '../../../plugins/gate/ledger/verdict-cache.js';
import { errors, RpcFailure } from '../../../src/errors.js';

const DEPENDENCIES: StateDependencies = {
  accounts: [[`0x${'11'.repeat(20)}`, '7', '1000']],
  codes: [[`0x${'11'.repeat(20)}`, '0x']],
  slots: [],
};

describe('gate: answers, the one place what it throws becomes a wire answer', () => {
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
});
