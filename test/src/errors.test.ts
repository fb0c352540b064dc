import { expect } from 'chai';
import {
  bodyTooLarge,
  errors,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  LIMIT_EXCEEDED,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  RpcFailure,
  SERVER_ERROR,
  transport,
  type RpcError,
} from '../../src/errors.js';

const INTERNAL = (message: string) => ({ code: -32603, message });
const HASH = `0x${'ab'.repeat(32)}`;
const POLL = 'poll with eth_newFilter or eth_newBlockFilter and eth_getFilterChanges, or with eth_getLogs';

describe('errors: the wire error catalogue', () => {
  it('uses the JSON-RPC 2.0 and EIP-1474 codes', () => {
    expect([PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR, SERVER_ERROR, LIMIT_EXCEEDED]).to.deep.equal([
      -32700, -32600, -32601, -32602, -32603, -32000, -32005,
    ]);
  });

  it('names every condition it answers, and no other', () => {
    expect(Object.keys(errors)).to.deep.equal([
      'parseError',
      'invalidRequest',
      'notificationRefused',
      'batchRefused',
      'methodNotFound',
      'signingRefused',
      'subscriptionsRefused',
      'notSupportedByIngress',
      'invalidParams',
      'oversizedTransaction',
      'upstreamUnavailable',
      'upstreamInvalid',
      'nodeUnavailable',
      'submissionUnavailable',
      'alreadyKnown',
      'rejected',
      'rejectedByExecutionLayer',
      'rateLimited',
      'callTooLong',
      'unknownApiKey',
      'subscriptionKindUnsupported',
      'logCriteriaRefused',
      'tooManySubscriptions',
      'answerTooLarge',
      'syncTimeout',
      'syncNonceGap',
      'followerRefusesSubmissions',
      'validationUnavailable',
      'frameReverted',
      'headerNotFound',
      'blockRangeTooWide',
      'frameEstimateFailed',
      'internal',
    ]);
  });

  // Each entry: the factory called as its callers call it, and the exact object it returns.
  const CATALOGUE: ReadonlyArray<readonly [string, () => RpcError, object]> = [
    ['parseError', () => errors.parseError(), { code: -32700, message: 'parse error: the body is not valid JSON' }],
    [
      'invalidRequest',
      () => errors.invalidRequest('"jsonrpc" must be "2.0"'),
      { code: -32600, message: 'invalid request: "jsonrpc" must be "2.0"' },
    ],
    [
      'notificationRefused',
      () => errors.notificationRefused(),
      { code: -32600, message: 'invalid request: notifications (requests without an id) are not supported; add an id' },
    ],
    [
      'batchRefused',
      () => errors.batchRefused(),
      {
        code: -32600,
        message:
          'batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)',
      },
    ],
    ['methodNotFound', () => errors.methodNotFound(), { code: -32601, message: 'the method does not exist/is not available' }],
    [
      'signingRefused',
      () => errors.signingRefused(),
      {
        code: -32601,
        message: 'the method is not supported: this endpoint holds no keys; sign in the client and use eth_sendRawTransaction',
      },
    ],
    [
      'subscriptionsRefused',
      () => errors.subscriptionsRefused(),
      { code: -32601, message: `subscriptions are not supported yet: ${POLL}` },
    ],
    [
      'notSupportedByIngress',
      () => errors.notSupportedByIngress('svc_validateTransaction'),
      { code: -32601, message: 'the method svc_validateTransaction is not supported by the ingress' },
    ],
    ['invalidParams', () => errors.invalidParams('expected 1 argument'), { code: -32602, message: 'invalid params: expected 1 argument' }],
    [
      'oversizedTransaction',
      () => errors.oversizedTransaction(131_072),
      { code: -32602, message: 'oversized transaction', data: { max_bytes: 131_072 } },
    ],
    ['upstreamUnavailable', () => errors.upstreamUnavailable(), INTERNAL('upstream unavailable: the execution layer did not answer')],
    ['upstreamInvalid', () => errors.upstreamInvalid(), INTERNAL('upstream error: the execution layer answered an invalid response')],
    ['nodeUnavailable', () => errors.nodeUnavailable(), INTERNAL('node unavailable: the consensus node did not answer')],
    [
      'submissionUnavailable',
      () => errors.submissionUnavailable(),
      INTERNAL('submission unavailable: the transaction was not forwarded; retry later'),
    ],
    ['alreadyKnown', () => errors.alreadyKnown(), { code: -32000, message: 'already known' }],
    [
      'rejected',
      () => errors.rejected('nonce-gap', "nonce 70 is 66 ahead of the sender's next (at most 64)"),
      { code: -32000, message: "rejected: nonce 70 is 66 ahead of the sender's next (at most 64)", data: { reason: 'nonce-gap' } },
    ],
    [
      'rejectedByExecutionLayer',
      () => errors.rejectedByExecutionLayer('nonce too low'),
      { code: -32000, message: 'rejected by the execution layer: nonce too low', data: { reason: 'el-rejected' } },
    ],
    [
      'rateLimited',
      () => errors.rateLimited('source', 1_500),
      {
        code: -32005,
        message: 'rate limited: too many requests from this source; retry later',
        data: { retry_after_ms: 1_500 },
        httpStatus: 429,
        retryAfterMs: 1_500,
      },
    ],
    [
      'rateLimited',
      () => errors.rateLimited('heavy-in-flight', 1_000),
      {
        code: -32005,
        message:
          'rate limited: too many eth_call, eth_estimateGas, eth_createAccessList or eth_simulateV1 requests in flight from this source; retry later',
        data: { retry_after_ms: 1_000 },
        httpStatus: 429,
        retryAfterMs: 1_000,
      },
    ],
    [
      'rateLimited',
      () => errors.rateLimited('in-flight', 1_000),
      {
        code: -32005,
        message: 'rate limited: too many requests in flight from this source; retry later',
        data: { retry_after_ms: 1_000 },
        httpStatus: 429,
        retryAfterMs: 1_000,
      },
    ],
    [
      'callTooLong',
      () => errors.callTooLong(4_500.2, 950, 67_000),
      {
        code: -32005,
        message:
          'rate limited: calls this large from this source lately kept the execution layer longer than one call may; ask for less gas or retry later',
        data: { retry_after_ms: 67_000, expected_ms: 4_501, max_ms: 950 },
        httpStatus: 429,
        retryAfterMs: 67_000,
      },
    ],
    ['unknownApiKey', () => errors.unknownApiKey(), { code: -32000, message: 'unauthorized: unknown API key', httpStatus: 401 }],
    [
      'unknownApiKey',
      () => errors.unknownApiKey(250),
      { code: -32000, message: 'unauthorized: unknown API key', httpStatus: 401, holdMs: 250 },
    ],
    [
      'subscriptionKindUnsupported',
      () => errors.subscriptionKindUnsupported('syncing'),
      { code: -32602, message: `invalid params: subscriptions of "syncing" are not served: newHeads and logs only; ${POLL}` },
    ],
    [
      'logCriteriaRefused',
      () => errors.logCriteriaRefused('invalid topic(s)', false),
      { code: -32602, message: 'invalid argument 1: invalid topic(s)' },
    ],
    [
      'tooManySubscriptions',
      () => errors.tooManySubscriptions(16),
      { code: -32005, message: 'too many subscriptions on this connection (at most 16): unsubscribe one, or open another connection' },
    ],
    [
      'tooManySubscriptions',
      () => errors.tooManySubscriptions(64, 'source'),
      { code: -32005, message: 'too many subscriptions from this source (at most 64): unsubscribe one' },
    ],
    [
      'answerTooLarge',
      () => errors.answerTooLarge(16),
      {
        code: -32603,
        message: 'the answer is larger than 16 bytes, the most a WebSocket message carries here: ask over HTTP, where answers stream',
      },
    ],
    [
      'syncTimeout',
      () => errors.syncTimeout(HASH),
      { code: 4, message: 'the transaction was ordered but not included within the timeout; wait for its receipt', data: HASH },
    ],
    [
      'syncNonceGap',
      () => errors.syncNonceGap(255n),
      { code: 6, message: "nonce gap: the transaction was not accepted; the sender's next nonce is 255", data: '0xff' },
    ],
    [
      'followerRefusesSubmissions',
      () => errors.followerRefusesSubmissions(),
      { code: -32000, message: 'submissions are not accepted by this node (a follower): send them to the public endpoint' },
    ],
    [
      'validationUnavailable',
      () => errors.validationUnavailable(),
      INTERNAL('validation unavailable: the ingress could not reach its execution layer'),
    ],
    [
      'frameReverted',
      () => errors.frameReverted('frame 1 (SENDER) reverted', '0x08c379a0'),
      { code: 3, message: 'execution reverted: frame 1 (SENDER) reverted', data: '0x08c379a0' },
    ],
    ['headerNotFound', () => errors.headerNotFound(), { code: -32000, message: 'header not found' }],
    ['blockRangeTooWide', () => errors.blockRangeTooWide(10_000), { code: -32000, message: 'exceed maximum block range: 10000' }],
    [
      'frameEstimateFailed',
      () => errors.frameEstimateFailed("the transaction cannot be included: nonce 3, the sender's is 2"),
      { code: -32000, message: "gas estimation failed: the transaction cannot be included: nonce 3, the sender's is 2" },
    ],
    ['internal', () => errors.internal(), INTERNAL('internal error')],
  ];

  describe('each factory, exactly (no data member unless it has data; frozen)', () => {
    for (const [name, make, expected] of CATALOGUE) {
      it(`${name}: ${JSON.stringify(expected)}`, () => {
        const error = make();
        // deep.equal alone would take a `data: undefined` member for an absent one; the wire would not.
        expect(Object.keys(error)).to.deep.equal(Object.keys(expected));
        expect(error).to.deep.equal(expected);
        expect(Object.isFrozen(error)).to.equal(true);
      });
    }

    it('covers every factory of the catalogue', () => {
      expect([...new Set(CATALOGUE.map(([name]) => name))]).to.deep.equal(Object.keys(errors));
    });
  });

  describe('the variants', () => {
    it('answers an unknown method with the very same object every time (same condition, same bytes)', () => {
      expect(errors.methodNotFound()).to.equal(errors.methodNotFound());
    });

    it('marks a cached gate verdict in the message and the data, after any extra members', () => {
      expect(errors.rejected('verify-reverted', 'VERIFY frame 0 reverted', true, { frame: 0, cause: 'revert' })).to.deep.equal({
        code: -32000,
        message: 'rejected: VERIFY frame 0 reverted (cached verdict)',
        data: { reason: 'verify-reverted', frame: 0, cause: 'revert', cached: true },
      });
      expect(errors.rejected('verify-reverted', 'VERIFY frame 0 reverted', false, { frame: 0 }).data).to.deep.equal({
        reason: 'verify-reverted',
        frame: 0,
      });
    });

    it('keeps the reason first on the wire and never lets an extra member replace it', () => {
      const error = errors.rejected('verify-rejected', 'VERIFY frame 0: reverted', true, { reason: 'other', frame: 0 });
      expect(JSON.stringify(error.data)).to.equal('{"reason":"verify-rejected","frame":0,"cached":true}');
    });

    it('marks a cached execution-layer verdict the same way', () => {
      expect(errors.rejectedByExecutionLayer('insufficient funds', true)).to.deep.equal({
        code: -32000,
        message: 'rejected by the execution layer: insufficient funds (cached verdict)',
        data: { reason: 'el-rejected', cached: true },
      });
    });

    it('says whose bucket ran dry when the host-wide one did', () => {
      expect(errors.rateLimited('host', 20)).to.deep.equal({
        code: -32005,
        message: 'rate limited: the endpoint is at capacity; retry later',
        data: { retry_after_ms: 20 },
        httpStatus: 429,
        retryAfterMs: 20,
      });
    });

    it('states an expected nonce of 0 as 0x0', () => {
      expect(errors.syncNonceGap(0n)).to.deep.include({
        message: "nonce gap: the transaction was not accepted; the sender's next nonce is 0",
        data: '0x0',
      });
    });

    it('travels an unknown API key with HTTP 401, as keyed endpoints answer, and no Retry-After', () => {
      expect(errors.unknownApiKey()).to.include({ httpStatus: 401 }).and.not.to.have.any.keys('retryAfterMs');
    });

    it('travels every other condition with HTTP 200 (no httpStatus, no Retry-After)', () => {
      const limited = new Set(['rateLimited', 'callTooLong', 'unknownApiKey']);
      for (const [name, make] of CATALOGUE) {
        if (limited.has(name)) continue;
        expect(make(), name).not.to.have.any.keys('httpStatus', 'retryAfterMs');
      }
    });
  });

  describe('RpcFailure', () => {
    it('carries its catalogue error, as it is, with its message and an optional cause', () => {
      const cause = new Error('connect ECONNREFUSED 127.0.0.1:8545');
      const rpc = errors.upstreamUnavailable();
      const failure = new RpcFailure(rpc, { cause });
      expect(failure).to.be.instanceOf(Error);
      expect(failure.rpc).to.equal(rpc);
      expect([failure.name, failure.message, failure.cause]).to.deep.equal([
        'RpcFailure',
        'upstream unavailable: the execution layer did not answer',
        cause,
      ]);
      expect('cause' in new RpcFailure(rpc)).to.equal(false);
    });
  });

  describe('transport refusals', () => {
    it('answers each with its HTTP status, metric reason and text', () => {
      expect(transport).to.deep.equal({
        methodNotAllowed: { status: 405, reason: 'method_not_allowed', message: 'only POST is accepted' },
        webSocketRefused: {
          status: 400,
          reason: 'websocket',
          message:
            'incomplete WebSocket handshake: a client sends Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Key and Sec-WebSocket-Version: 13',
        },
        unsupportedMediaType: {
          status: 415,
          reason: 'unsupported_media_type',
          message: 'the body must be JSON sent as Content-Type: application/json',
        },
        unsupportedEncoding: { status: 415, reason: 'unsupported_encoding', message: 'compressed request bodies are not supported' },
        lengthRequired: {
          status: 411,
          reason: 'length_required',
          message: 'send the body with a Content-Length header (chunked request bodies are not accepted)',
        },
        badRequest: { status: 400, reason: 'bad_request', message: 'malformed HTTP request' },
        // Node's default --max-http-header-size; docs/errors.md's 431 row says 16 KiB.
        headersTooLarge: { status: 431, reason: 'headers_too_large', message: 'request headers too large (at most 16384 bytes)' },
        tooManyHeaders: { status: 431, reason: 'too_many_headers', message: 'too many request headers (at most 100)' },
        requestTimeout: { status: 408, reason: 'request_timeout', message: 'the request was not received in time' },
        bodyStalled: { status: 408, reason: 'body_stalled', message: 'the request body stopped arriving' },
        bodyBudget: { status: 503, reason: 'body_budget', message: 'the endpoint is receiving too many request bodies; retry later' },
        bodyBudgetSource: {
          status: 429,
          reason: 'body_budget_source',
          message: 'too many request bodies are being received from this source; retry later',
        },
        tooManyPipelined: {
          status: 429,
          reason: 'pipelined',
          message: 'too many requests pipelined on this connection (at most 32 waiting): read the answers before sending more',
        },
        expectationFailed: { status: 417, reason: 'expectation_failed', message: 'only "Expect: 100-continue" is understood' },
      });
    });

    it('states the configured cap in a 413', () => {
      expect(bodyTooLarge(1_048_576)).to.deep.equal({
        status: 413,
        reason: 'payload_too_large',
        message: 'request body too large (at most 1048576 bytes)',
      });
    });

    it('labels each refusal with its own reason (a closed set of metric labels)', () => {
      const reasons = [...Object.values(transport), bodyTooLarge(1)].map((refusal) => refusal.reason);
      expect(new Set(reasons).size).to.equal(reasons.length);
      for (const reason of reasons) expect(reason).to.match(/^[a-z]+(?:_[a-z]+)*$/);
    });
  });

  // ../shared/docs/service-spec.md section 7 (and 4.3, 4.5, 5): the codes and messages it fixes.
  describe('as the service spec names them', () => {
    it('-32602 "oversized transaction" for a raw transaction over 128 KiB (4.3, 7, 8)', () => {
      expect(errors.oversizedTransaction(128 * 1024)).to.deep.include({ code: -32602, message: 'oversized transaction' });
    });

    it('-32005 for a submission over quota, from either bucket (7, 8)', () => {
      expect([errors.rateLimited('source', 1).code, errors.rateLimited('host', 1).code]).to.deep.equal([-32005, -32005]);
    });

    it('-32000 for already known, for refusals by validation (cached ones marked), and for nonce-gap and in-flight refusals (7)', () => {
      expect(errors.alreadyKnown()).to.deep.equal({ code: -32000, message: 'already known' });
      expect(errors.rejectedByExecutionLayer('gas too low', true).message).to.equal(
        'rejected by the execution layer: gas too low (cached verdict)',
      );
      expect(errors.rejected('nonce-gap', 'x').code).to.equal(-32000);
      expect(errors.rejected('in-flight-cap', 'x').code).to.equal(-32000);
    });

    it('-32603 for validation unavailable (7)', () => {
      expect(errors.validationUnavailable().code).to.equal(-32603);
    });

    it('-32601 for unknown methods, signing methods and svc_validateTransaction, whose message says the ingress does not support it (4.5, 5, 7)', () => {
      expect(
        [errors.methodNotFound(), errors.signingRefused(), errors.notSupportedByIngress('svc_validateTransaction')].map((e) => e.code),
      ).to.deep.equal([-32601, -32601, -32601]);
      expect(errors.notSupportedByIngress('svc_validateTransaction').message).to.include('is not supported by the ingress');
    });
  });
});
