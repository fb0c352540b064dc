import { expect } from 'chai';
import { keccak256 } from 'ethers';
import type { IncomingHttpHeaders } from 'node:http';
import { createFollower } from '../../../plugins/gate/follower.js';
import { errors, RpcFailure } from '../../../src/errors.js';
import { Facts } from '../../../src/facts.js';
import { RequestTab } from '../../../src/request-tab.js';
import type { Plugin, RequestContext } from '../../../src/plugin.js';
import { Upstream } from '../../../src/upstream.js';
import { walletFor } from '../../../support/keys.js';
import { freePort } from '../../../support/ports.js';
import { startStubEl, type StubRequest } from '../../../support/stub-el.js';
import { within } from '../../../support/within.js';

/** Every call here is answered at once by a loopback server, or refused at once by a closed port. */
const CALL_MS = 5_000;
const PEER = '198.51.100.20';
const FOLLOWER_REFUSAL = {
  error: { code: -32000, message: 'submissions are not accepted by this node (a follower): send them to the public endpoint' },
};
const RATE_LIMITED = {
  code: -32005,
  message: 'rate limited: too many requests from this source; retry later',
  data: { retry_after_ms: 1_500 },
};

/** A frame transaction as svc_estimateFrameGas takes it. */
const FRAME_REQUEST = { from: `0x${'11'.repeat(20)}`, frames: [{ mode: '0x1', flags: '0x3' }] };

/** What the validator's ingress received: the call and its headers. */
interface Relayed {
  readonly body: StubRequest;
  readonly headers: IncomingHttpHeaders;
}

/** A validator's ingress as a follower sees it: real HTTP, recording each call, answering what the test sets. */
async function startValidator() {
  const received: Relayed[] = [];
  /** The HTTP status and JSON-RPC member of the next answers. */
  const reply = { status: 200, member: { result: null } as object };
  const stub = await startStubEl(
    {},
    {
      intercept: ({ request, headers }) => {
        received.push({ body: request, headers });
        return { status: reply.status, body: JSON.stringify({ jsonrpc: '2.0', id: request.id, ...reply.member }) };
      },
    },
  );
  return { url: stub.url, received, reply, close: () => stub.close() };
}

/** As the runtime builds a relay (PluginEnv.relayTo): the validator's 429 answers are read as JSON-RPC. */
const relayTo = (url: string) => new Upstream({ url, connections: 1, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000, isIngress: true });

const context = (method: string, params: unknown, headers: IncomingHttpHeaders = {}): RequestContext => ({
  request: Object.freeze({ jsonrpc: '2.0', id: 7, method, params: params as unknown[] }),
  peer: { address: PEER, headers },
  facts: new Facts(),
  tab: new RequestTab(),
});

/** What the follower answered, or the RpcFailure it threw (the server answers its `rpc`). */
async function outcome(follower: Plugin, ctx: RequestContext): Promise<unknown> {
  try {
    return await within(CALL_MS, 'follower', Promise.resolve(follower.handle!(ctx)));
  } catch (err) {
    if (err instanceof RpcFailure) return { thrown: err.rpc };
    throw err;
  }
}

describe('gate: follower (role: follower)', () => {
  let raw: string;

  before(async () => {
    raw = await walletFor('gate: follower').signTransaction({
      chainId: 8141,
      type: 2,
      nonce: 0,
      to: `0x${'44'.repeat(20)}`,
      value: 1n,
      gasLimit: 21_000,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 0n,
    });
  });

  it("acts on the two submission methods and frame transactions' gas estimates only, and passes any other method", async () => {
    const follower = createFollower(undefined);
    expect(follower.name).to.equal('gate');
    expect([...follower.methods!].sort()).to.deep.equal([
      'eth_estimateGas',
      'eth_sendRawTransaction',
      'eth_sendRawTransactionSync',
      'svc_estimateFrameGas',
    ]);
    expect(await outcome(follower, context('eth_chainId', []))).to.equal(undefined);
    expect(await outcome(follower, context('eth_estimateGas', [{ to: PEER }]))).to.equal(undefined);
  });

  describe('without relay_url', () => {
    const follower = createFollower(undefined);

    for (const [method, params] of [
      ['eth_sendRawTransaction', () => [raw]],
      ['eth_sendRawTransactionSync', () => [raw, 5_000]],
    ] as const) {
      it(`refuses ${method} with -32000, naming the public endpoint`, async () => {
        expect(await outcome(follower, context(method, params()))).to.deep.equal(FOLLOWER_REFUSAL);
      });
    }

    it("answers a frame transaction's gas estimate as not supported here: the EL would estimate something else", async () => {
      expect(await outcome(follower, context('svc_estimateFrameGas', [FRAME_REQUEST]))).to.deep.equal({
        error: { code: -32601, message: 'the method svc_estimateFrameGas is not supported by the ingress' },
      });
      expect(await outcome(follower, context('eth_estimateGas', [{ ...FRAME_REQUEST, type: '0x6' }]))).to.deep.equal({
        error: { code: -32601, message: 'the method eth_estimateGas is not supported by the ingress' },
      });
    });

    it('refuses malformed params as -32602 first, as a validator would', async () => {
      expect(await outcome(follower, context('eth_sendRawTransaction', ['0x0']))).to.deep.equal({
        thrown: { code: -32602, message: 'invalid params: the raw transaction must be non-empty 0x-prefixed hex of whole bytes' },
      });
    });
  });

  describe("with relay_url: relays each submission to the validator's ingress", () => {
    let validator: Awaited<ReturnType<typeof startValidator>>;
    let relay: Upstream;
    let follower: Plugin;

    before(async () => {
      validator = await startValidator();
      relay = relayTo(validator.url);
      follower = createFollower(relay);
    });
    after(async () => {
      await relay?.close();
      await validator?.close();
    });
    beforeEach(() => {
      validator.received.length = 0;
      Object.assign(validator.reply, { status: 200, member: { result: keccak256(raw) } });
    });

    const relayedCalls = () => validator.received.map(({ body, headers }) => ({ body, forwardedFor: headers['x-forwarded-for'] }));

    it('relays eth_sendRawTransaction with the raw transaction alone, X-Forwarded-For naming the client, and answers the hash', async () => {
      expect(await outcome(follower, context('eth_sendRawTransaction', [raw]))).to.deep.equal({ result: keccak256(raw) });
      expect(relayedCalls()).to.deep.equal([
        { body: { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }, forwardedFor: PEER },
      ]);
    });

    it('answers its own keccak-256 of the raw bytes, not the hash the validator echoes', async () => {
      Object.assign(validator.reply, { status: 200, member: { result: `0x${'00'.repeat(32)}` } });
      expect(await outcome(follower, context('eth_sendRawTransaction', [raw]))).to.deep.equal({ result: keccak256(raw) });
    });

    it("relays a frame transaction's gas estimate as asked, X-Forwarded-For naming the client, and answers the validator's", async () => {
      const estimate = { frames: [{ executionGas: '0x64', stateGas: '0x0' }], gas: '0x5208' };
      Object.assign(validator.reply, { status: 200, member: { result: estimate } });
      expect(await outcome(follower, context('svc_estimateFrameGas', [FRAME_REQUEST, 'latest']))).to.deep.equal({ result: estimate });
      expect(relayedCalls()).to.deep.equal([
        { body: { jsonrpc: '2.0', id: 1, method: 'svc_estimateFrameGas', params: [FRAME_REQUEST, 'latest'] }, forwardedFor: PEER },
      ]);
    });

    it('appends the client to an X-Forwarded-For it arrived with', async () => {
      await outcome(follower, context('eth_sendRawTransaction', [raw], { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' }));
      await outcome(follower, context('eth_sendRawTransaction', [raw], { 'x-forwarded-for': '' }));
      expect(relayedCalls().map((c) => c.forwardedFor)).to.deep.equal([`203.0.113.7, 10.0.0.1, ${PEER}`, PEER]);
    });

    it("passes the validator's refusal through as given", async () => {
      const rejected = { code: -32000, message: 'rejected: nonce too low', data: { reason: 'nonce-too-low' } };
      Object.assign(validator.reply, { status: 200, member: { error: rejected } });
      expect(await outcome(follower, context('eth_sendRawTransaction', [raw]))).to.deep.equal({ error: rejected });
    });

    for (const [method, params] of [
      ['eth_sendRawTransaction', () => [raw]],
      ['eth_sendRawTransactionSync', () => [raw]],
    ] as const) {
      it(`keeps the validator's -32005 on ${method} as HTTP 429 with its retry_after_ms as retryAfterMs`, async () => {
        Object.assign(validator.reply, { status: 429, member: { error: RATE_LIMITED } });
        expect(await outcome(follower, context(method, params()))).to.deep.equal({
          error: { ...RATE_LIMITED, httpStatus: 429, retryAfterMs: 1_500 },
        });
      });
    }

    it('gives HTTP 429 to -32005 only: another code carrying retry_after_ms comes back as it came', async () => {
      const error = { code: -32000, message: 'rejected: too many in flight', data: { reason: 'in-flight-cap', retry_after_ms: 1_000 } };
      Object.assign(validator.reply, { status: 200, member: { error } });
      expect(await outcome(follower, context('eth_sendRawTransaction', [raw]))).to.deep.equal({ error });
    });

    it('leaves a -32005 without a numeric retry_after_ms as it came', async () => {
      const error = { code: -32005, message: 'rate limited', data: { retry_after_ms: '1500' } };
      Object.assign(validator.reply, { status: 200, member: { error } });
      expect(await outcome(follower, context('eth_sendRawTransaction', [raw]))).to.deep.equal({ error });
    });

    it("relays eth_sendRawTransactionSync with its params as given, timeout included, and answers the validator's receipt", async () => {
      const receipt = { transactionHash: keccak256(raw), blockNumber: '0x10', status: '0x1' };
      Object.assign(validator.reply, { status: 200, member: { result: receipt } });
      expect(
        await outcome(follower, context('eth_sendRawTransactionSync', [raw, 5_000], { 'x-forwarded-for': '203.0.113.7' })),
      ).to.deep.equal({
        result: receipt,
      });
      expect(relayedCalls()).to.deep.equal([
        {
          body: { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransactionSync', params: [raw, 5_000] },
          forwardedFor: `203.0.113.7, ${PEER}`,
        },
      ]);
    });

    it("passes the validator's EIP-7966 timeout (error 4) on eth_sendRawTransactionSync through", async () => {
      const timeout = {
        code: 4,
        message: 'the transaction was ordered but not included within the timeout; wait for its receipt',
        data: keccak256(raw),
      };
      Object.assign(validator.reply, { status: 200, member: { error: timeout } });
      expect(await outcome(follower, context('eth_sendRawTransactionSync', [raw]))).to.deep.equal({ error: timeout });
    });

    it('relays nothing for malformed params', async () => {
      expect(await outcome(follower, context('eth_sendRawTransactionSync', [raw, 5_000, 1]))).to.deep.equal({
        thrown: { code: -32602, message: 'invalid params: expected one parameter, the raw transaction as 0x-prefixed hex' },
      });
      expect(validator.received).to.deep.equal([]);
    });
  });

  describe('with relay_url, the validator unreachable', () => {
    let nobody: Upstream;
    before(async () => {
      nobody = relayTo(`http://127.0.0.1:${await freePort()}`);
    });
    after(() => nobody?.close());

    it('refuses eth_sendRawTransaction with -32603 "submission unavailable"', async () => {
      expect(await outcome(createFollower(nobody), context('eth_sendRawTransaction', [raw]))).to.deep.equal({
        thrown: errors.submissionUnavailable(),
      });
    });

    it('answers eth_sendRawTransactionSync with -32603 "submission unavailable"', async () => {
      expect(await outcome(createFollower(nobody), context('eth_sendRawTransactionSync', [raw, 5_000]))).to.deep.equal({
        error: { code: -32603, message: 'submission unavailable: the transaction was not forwarded; retry later' },
      });
    });
  });
});
