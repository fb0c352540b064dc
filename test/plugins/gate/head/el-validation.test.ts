import { expect } from 'chai';
import { decodeSubmission, type Submission } from '../../../../plugins/gate/submission/decode.js';
import { createElValidation } from '../../../../plugins/gate/head/el-validation.js';
import { answerFor, cachedRefusalOf, refusalError } from '../../../../plugins/gate/answers.js';
import { ExecutionLayerRefusal, Refusal, Unavailable } from '../../../../plugins/gate/errors.js';
import { readRawTransaction } from '../../../../plugins/gate/submission/raw-transaction.js';
import { errors, RpcFailure } from '../../../../src/errors.js';
import { Upstream } from '../../../../src/upstream.js';
import { walletFor } from '../../../../support/keys.js';
import { freePort } from '../../../../support/ports.js';
import { startStubEl, type StubEl } from '../../../../support/stub-el.js';
import { within } from '../../../../support/within.js';

const METHOD = 'svc_validateTransaction';
const DECODE_LIMITS = { chainId: 8141n, blockGasLimit: 60_000_000n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n };
/** Every call here is answered at once by a loopback stub, or refused at once by a closed port. */
const CALL_MS = 5_000;

const upstreamAt = (url: string) => new Upstream({ url, connections: 1, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });

/** The whole wire answer of the stub for one call: `result` or `error` as given. */
const answering = (member: { result: unknown } | { error: unknown }) => (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, ...member });

/** What validation threw for the EL's answer, or 'admitted'. */
async function settle(validate: (sub: Submission) => Promise<void>, sub: Submission): Promise<unknown> {
  try {
    await within(CALL_MS, 'EL validation', validate(sub));
    return 'admitted';
  } catch (err) {
    return err;
  }
}

/** What validation made of the EL's answer: admitted, or the error thrown, described in full. */
async function outcome(validate: (sub: Submission) => Promise<void>, sub: Submission): Promise<unknown> {
  const err = await settle(validate, sub);
  if (err instanceof ExecutionLayerRefusal) {
    expect(err).to.be.instanceOf(Refusal);
    return { refused: { reason: err.reason, detail: err.detail, elReason: err.elReason, message: err.message } };
  }
  if (err instanceof Unavailable) {
    const cause = err.cause instanceof RpcFailure ? { rpc: err.cause.rpc } : err.cause;
    return { unavailable: err.message, ...(cause === undefined ? {} : { cause }) };
  }
  if (err === 'admitted') return err;
  throw err;
}

describe('gate: EL validation (validation_method)', () => {
  let sub: Submission;
  let raw: string;
  /** The stub's answer to the validation method, set by each test. */
  let answer: (id: unknown) => string;
  let el: StubEl;
  let execution: Upstream;

  before(async () => {
    raw = await walletFor('gate: EL validation').signTransaction({
      chainId: 8141,
      type: 2,
      nonce: 0,
      to: `0x${'11'.repeat(20)}`,
      value: 1n,
      gasLimit: 21_000,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 0n,
    });
    sub = decodeSubmission(readRawTransaction([raw]), DECODE_LIMITS);
    el = await startStubEl({ [METHOD]: (id) => answer(id) });
    execution = upstreamAt(el.url);
  });
  after(async () => {
    await execution?.close();
    await el?.close();
  });
  beforeEach(() => {
    el.received.length = 0;
    answer = answering({ result: { valid: true } });
  });

  it('is off (undefined) when no method is configured', () => {
    expect(createElValidation(execution, undefined)).to.equal(undefined);
  });

  it('sends one JSON-RPC call of the configured method with the raw transaction as sent, as its only param', async () => {
    expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.equal('admitted');
    expect(el.received).to.deep.equal([{ jsonrpc: '2.0', id: 1, method: METHOD, params: [raw] }]);
  });

  it('asks the method named in the configuration, whatever it is', async () => {
    const validate = createElValidation(execution, 'debug_checkTransaction')!;
    expect(await outcome(validate, sub)).to.deep.equal({ unavailable: 'debug_checkTransaction: the EL does not offer it' });
    expect(el.received).to.deep.equal([{ jsonrpc: '2.0', id: 1, method: 'debug_checkTransaction', params: [raw] }]);
  });

  describe('admits only an explicit yes', () => {
    for (const [label, result] of [
      ['{valid: true}', { valid: true }],
      ['true', true],
      ['{valid: true} with a reason beside it', { valid: true, reason: 'fine' }],
    ] as const) {
      it(`admits ${label}`, async () => {
        answer = answering({ result });
        expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.equal('admitted');
      });
    }
  });

  describe('an EL refusal becomes ExecutionLayerRefusal ("el-rejected") with the EL\'s own text', () => {
    const refusedWith = (elReason: string) => ({
      refused: { reason: 'el-rejected', detail: elReason, elReason, message: `el-rejected: ${elReason}` },
    });

    it('refuses {valid: false, reason} with the reason verbatim', async () => {
      answer = answering({ result: { valid: false, reason: 'verify-rejected: frame 0 reverted' } });
      expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.deep.equal(refusedWith('verify-rejected: frame 0 reverted'));
    });

    for (const [label, result] of [
      ['no reason', { valid: false }],
      ['a reason that is not a string', { valid: false, reason: { code: 3 } }],
    ] as const) {
      it(`refuses {valid: false} with ${label} as "invalid transaction"`, async () => {
        answer = answering({ result });
        expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.deep.equal(refusedWith('invalid transaction'));
      });
    }

    for (const code of [-32000, -32602, -32603, 3]) {
      it(`refuses a JSON-RPC error ${code} with its message verbatim, data ignored`, async () => {
        answer = answering({ error: { code, message: 'insufficient funds for gas * price + value', data: '0xdead' } });
        expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.deep.equal(
          refusedWith('insufficient funds for gas * price + value'),
        );
      });
    }
  });

  describe('on the wire, as the gate answers it (errors.ts)', () => {
    it('an EL refusal: -32000 "rejected by the execution layer: <the EL\'s text>", data {reason: "el-rejected"}', async () => {
      answer = answering({ result: { valid: false, reason: 'nonce too low: next nonce 7' } });
      const err = await settle(createElValidation(execution, METHOD)!, sub);
      expect(err).to.be.instanceOf(ExecutionLayerRefusal);
      expect(refusalError(cachedRefusalOf(err as ExecutionLayerRefusal, undefined), false)).to.deep.equal({
        code: -32000,
        message: 'rejected by the execution layer: nonce too low: next nonce 7',
        data: { reason: 'el-rejected' },
      });
    });

    it('an EL without the method: -32603 "validation unavailable", the EL\'s detail kept out of the answer', async () => {
      answer = answering({ error: { code: -32601, message: 'the method does not exist/is not available' } });
      const err = await settle(createElValidation(execution, METHOD)!, sub);
      expect(err).to.be.instanceOf(Unavailable);
      expect(answerFor(err)).to.deep.equal({
        error: { code: -32603, message: 'validation unavailable: the ingress could not reach its execution layer' },
      });
    });
  });

  describe('fails closed (Unavailable) on anything else: never read as a yes', () => {
    it('maps METHOD_NOT_FOUND (-32601) to "the EL does not offer it", whatever its message', async () => {
      answer = answering({ error: { code: -32601, message: 'the method svc_validateTransaction does not exist/is not available' } });
      expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.deep.equal({
        unavailable: `${METHOD}: the EL does not offer it`,
      });
    });

    for (const [label, result] of [
      ['false', false],
      ['null', null],
      ['"0x"', '0x'],
      ['1', 1],
      ['{valid: "yes"}', { valid: 'yes' }],
      ['{valid: 1}', { valid: 1 }],
      ['{}', {}],
      ['[true]', [true]],
    ] as const) {
      it(`refuses to read ${label} as a verdict`, async () => {
        answer = answering({ result });
        expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.deep.equal({
          unavailable: `${METHOD}: the answer is neither {valid: true} nor {valid: false}`,
        });
      });
    }

    it("maps an answer that is not JSON-RPC to Unavailable, carrying the upstream's RpcFailure", async () => {
      answer = () => '<html>502 Bad Gateway</html>';
      expect(await outcome(createElValidation(execution, METHOD)!, sub)).to.deep.equal({
        unavailable: `${METHOD}: upstream error: the execution layer answered an invalid response`,
        cause: { rpc: errors.upstreamInvalid() },
      });
    });

    it("maps an EL that cannot be reached to Unavailable, carrying the upstream's RpcFailure", async () => {
      const nobody = upstreamAt(`http://127.0.0.1:${await freePort()}`);
      try {
        expect(await outcome(createElValidation(nobody, METHOD)!, sub)).to.deep.equal({
          unavailable: `${METHOD}: upstream unavailable: the execution layer did not answer`,
          cause: { rpc: errors.upstreamUnavailable() },
        });
      } finally {
        await nobody.close();
      }
    });
  });
});
