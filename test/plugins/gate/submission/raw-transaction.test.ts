import { expect } from 'chai';
import { hexlify, keccak256, Transaction } from 'ethers';
import { forwardSubmission, readRawTransaction, type RawTransaction } from '../../../../plugins/gate/submission/raw-transaction.js';
import { errors, RpcFailure } from '../../../../src/errors.js';
import { Upstream } from '../../../../src/upstream.js';
import { walletFor } from '../../../../support/keys.js';
import { freePort } from '../../../../support/ports.js';
import { startStubEl, type StubEl } from '../../../../support/stub-el.js';
import { within } from '../../../../support/within.js';

/** Every call here is answered at once by a loopback stub, or refused at once by a closed port. */
const CALL_MS = 5_000;
const upstreamAt = (url: string) => new Upstream({ url, connections: 1, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });

const SHAPE = 'invalid params: expected one parameter, the raw transaction as 0x-prefixed hex';
const HEX = 'invalid params: the raw transaction must be non-empty 0x-prefixed hex of whole bytes';

/** The wire error readRawTransaction refuses `params` with, or 'read'. */
function refusalOf(params: unknown): unknown {
  try {
    readRawTransaction(params);
    return 'read';
  } catch (err) {
    if (!(err instanceof RpcFailure)) throw err;
    return err.rpc;
  }
}

describe('gate: the raw transaction of a submission', () => {
  describe('readRawTransaction: params must be exactly one non-empty 0x hex string of whole bytes', () => {
    for (const [label, params] of [
      ['no params', undefined],
      ['an object', { raw: '0x02' }],
      ['an empty array', []],
      ['two raw transactions', ['0x02', '0x02']],
      ['a raw transaction and a timeout (eth_sendRawTransaction takes no timeout)', ['0x02', 5_000]],
      ['a string rather than an array', '0x02'],
    ] as const) {
      it(`refuses ${label} with -32602 "${SHAPE}"`, () => {
        expect(refusalOf(params)).to.deep.equal({ code: -32602, message: SHAPE });
      });
    }

    for (const [label, raw] of [
      ['0x alone (no bytes)', '0x'],
      ['an empty string', ''],
      ['hex without 0x', '02f8'],
      ['an upper-case 0X prefix', '0X02'],
      ['an odd number of digits', '0x021'],
      ['a single digit', '0x0'],
      ['a character that is not hex', '0x02zz'],
      ['a space inside', '0x02 f8'],
      ['a trailing newline', '0x02\n'],
      ['a number', 2],
      ['null', null],
      ['an array of bytes', [2]],
      ['an array holding the hex (it reads as the hex once made a string)', ['0x02']],
    ] as const) {
      it(`refuses ${label} with -32602 "${HEX}"`, () => {
        expect(refusalOf([raw])).to.deep.equal({ code: -32602, message: HEX });
      });
    }

    it('reads mixed-case hex: the hex as sent, its bytes, and keccak-256 of the bytes as the hash (spec 1.6)', () => {
      const read = readRawTransaction(['0x02aBcD']);
      expect({ hex: read.hex, bytes: hexlify(read.bytes), hash: read.hash }).to.deep.equal({
        hex: '0x02aBcD',
        bytes: '0x02abcd',
        hash: keccak256('0x02abcd'),
      });
    });

    it('hashes a signed transaction to the hash every client computes for it', async () => {
      const raw = await walletFor('gate: raw transaction hash').signTransaction({
        chainId: 8141,
        type: 2,
        nonce: 3,
        to: `0x${'22'.repeat(20)}`,
        value: 5n,
        gasLimit: 21_000,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 0n,
      });
      expect(readRawTransaction([raw]).hash).to.equal(Transaction.from(raw).hash);
    });
  });

  describe('forwardSubmission', () => {
    let target: StubEl;
    let submit: Upstream;
    let raw: RawTransaction;
    /** The target's whole answer to eth_sendRawTransaction, set by each test. */
    let answer: (id: unknown) => string;

    before(async () => {
      raw = readRawTransaction([
        await walletFor('gate: forwarded submission').signTransaction({
          chainId: 8141,
          type: 2,
          nonce: 0,
          to: `0x${'33'.repeat(20)}`,
          value: 1n,
          gasLimit: 21_000,
          maxFeePerGas: 2_000_000_000n,
          maxPriorityFeePerGas: 0n,
        }),
      ]);
      target = await startStubEl({ eth_sendRawTransaction: (id) => answer(id) });
      submit = upstreamAt(target.url);
    });
    after(async () => {
      await submit?.close();
      await target?.close();
    });
    beforeEach(() => {
      target.received.length = 0;
    });

    it('sends the raw transaction as the client sent it, once, as the only param of eth_sendRawTransaction', async () => {
      answer = (id) => JSON.stringify({ jsonrpc: '2.0', id, result: raw.hash });
      await within(CALL_MS, 'forward', forwardSubmission(submit, raw));
      expect(target.received).to.deep.equal([{ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw.hex] }]);
    });

    it("answers the ingress's own keccak-256 of the raw bytes, not the hash the target echoes", async () => {
      answer = (id) => JSON.stringify({ jsonrpc: '2.0', id, result: `0x${'ee'.repeat(32)}` });
      expect(await within(CALL_MS, 'forward', forwardSubmission(submit, raw))).to.deep.equal({ result: keccak256(raw.hex) });
    });

    it('passes a refusal by the target through: its code, message and data', async () => {
      answer = (id) =>
        JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'nonce too low: next nonce 4', data: { reason: 'stale' } } });
      expect(await within(CALL_MS, 'forward', forwardSubmission(submit, raw))).to.deep.equal({
        error: { code: -32000, message: 'nonce too low: next nonce 4', data: { reason: 'stale' } },
      });
    });

    it('passes a target refusal with a code of its own (4444) through untouched', async () => {
      answer = (id) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: 4444, message: 'pruned' } });
      expect(await within(CALL_MS, 'forward', forwardSubmission(submit, raw))).to.deep.equal({ error: { code: 4444, message: 'pruned' } });
    });

    it('fails closed when the target cannot be reached: -32603 "submission unavailable", carrying the upstream failure', async () => {
      const nobody = upstreamAt(`http://127.0.0.1:${await freePort()}`);
      try {
        const failure = await within(CALL_MS, 'forward', forwardSubmission(nobody, raw)).then(
          () => 'answered',
          (err: unknown) => err,
        );
        expect(failure).to.be.instanceOf(RpcFailure);
        expect((failure as RpcFailure).rpc).to.deep.equal({
          code: -32603,
          message: 'submission unavailable: the transaction was not forwarded; retry later',
        });
        expect(((failure as RpcFailure).cause as RpcFailure).rpc).to.deep.equal(errors.upstreamUnavailable());
      } finally {
        await nobody.close();
      }
    });

    it('fails closed the same way when the target answers something that is not JSON-RPC', async () => {
      answer = () => '<html>502 Bad Gateway</html>';
      const failure = await within(CALL_MS, 'forward', forwardSubmission(submit, raw)).then(
        () => 'answered',
        (err: unknown) => err,
      );
      expect(failure).to.be.instanceOf(RpcFailure);
      expect((failure as RpcFailure).rpc).to.deep.equal(errors.submissionUnavailable());
      expect(((failure as RpcFailure).cause as RpcFailure).rpc).to.deep.equal(errors.upstreamInvalid());
    });
  });
});
