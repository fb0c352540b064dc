import { expect } from 'chai';
import { Agent, request } from 'undici';
import { rpc } from '../../support/http.js';
import { OPERATOR_TOKEN, startTestIngress, testConfig } from '../helpers/ingress.js';
import { useTappedIngress } from '../helpers/tap.js';

describe('auth', () => {
  const suite = useTappedIngress();

  const unknownMethodAnswer = async (id: unknown) => {
    const reply = await rpc(suite.ingress.url, 'svc_noSuchMethod', [], id);
    return { status: reply.status, type: reply.headers['content-type'], text: reply.text };
  };

  for (const [label, headers] of [
    ['without a token', {}],
    ['with a wrong token', { authorization: 'Bearer wrong-token-wrong-token-xx' }],
    ['with the token under the wrong scheme', { authorization: `Basic ${OPERATOR_TOKEN}` }],
    ['with a token that is a prefix of the right one', { authorization: `Bearer ${OPERATOR_TOKEN.slice(0, -1)}` }],
    ['with an empty bearer', { authorization: 'Bearer ' }],
  ] as const) {
    it(`answers svc_nodeHealth ${label} byte-for-byte like an unknown method`, async () => {
      for (const id of [1, 'x', null]) {
        const reply = await rpc(suite.ingress.url, 'svc_nodeHealth', [], id, headers);
        expect({ status: reply.status, type: reply.headers['content-type'], text: reply.text }).to.deep.equal(
          await unknownMethodAnswer(id),
        );
      }
      expect(suite.tap.bodies).to.deep.equal([]);
    });
  }

  // The whole header must be `Bearer <token>`: one that merely contains it carries no token.
  for (const [label, header] of [
    ['behind another scheme', `Basic Bearer ${OPERATOR_TOKEN}`],
    ['glued to a word before the scheme', `XBearer ${OPERATOR_TOKEN}`],
    ['followed by another word', `Bearer ${OPERATOR_TOKEN} x`],
    ['followed by itself', `Bearer ${OPERATOR_TOKEN} ${OPERATOR_TOKEN}`],
  ] as const) {
    it(`authorises the exact header but not the token ${label}, answered like an unknown method`, async () => {
      // Control: the exact header reaches the EL, so a refusal below is the header's doing.
      await rpc(suite.ingress.url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}` });
      expect(suite.tap.methods()).to.deep.equal(['svc_nodeHealth']);
      suite.tap.bodies.length = 0;
      const reply = await rpc(suite.ingress.url, 'svc_nodeHealth', [], 1, { authorization: header });
      expect({ status: reply.status, type: reply.headers['content-type'], text: reply.text }).to.deep.equal(await unknownMethodAnswer(1));
      expect(suite.tap.bodies).to.deep.equal([]);
    });
  }

  it('logs token guessing at the default level, once per window with a count, never the token', async () => {
    for (let i = 0; i < 20; i++)
      await rpc(suite.ingress.url, 'svc_nodeHealth', [], i, { authorization: `Bearer guess-${i}-0123456789abcdef` });
    // This suite's refusals all fall within one 10-second window: one line for all of them.
    const warnings = suite.ingress.logs.map((line) => JSON.parse(line)).filter((entry) => entry.level === 'warn');
    expect(warnings.map((entry) => entry.msg)).to.deep.equal([
      'operator method refused: no valid token (throttled: count since the last line)',
    ]);
    expect(warnings[0]).to.include({ method: 'svc_nodeHealth', peer: '127.0.0.1', count: 1 });
    expect(suite.ingress.logs.join('\n')).to.not.include('guess-');
  });

  it('throttles guessing per peer: past guesses_per_minute refusals, even the right token is refused alike', async () => {
    const guarded = await startTestIngress(
      testConfig(suite.tap.url, '\n  - auth:\n      token_env: SVC_TEST_OPERATOR_TOKEN\n      guesses_per_minute: 2\n  - allowlist'),
    );
    const health = async (from: string, token: string) => {
      const agent = new Agent({ localAddress: from });
      try {
        const reply = await request(guarded.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          dispatcher: agent,
          body: '{"jsonrpc":"2.0","id":1,"method":"svc_nodeHealth","params":[]}',
        });
        return reply.body.text();
      } finally {
        await agent.close();
      }
    };
    try {
      const unknown = '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"the method does not exist/is not available"}}';
      expect(await health('127.0.0.1', 'guess-one-0123456789abcdef')).to.equal(unknown);
      // One refusal short of the limit, the right token still works.
      suite.tap.bodies.length = 0;
      await health('127.0.0.1', OPERATOR_TOKEN);
      expect(suite.tap.methods()).to.deep.equal(['svc_nodeHealth']);
      expect(await health('127.0.0.1', 'guess-two-0123456789abcdef')).to.equal(unknown);
      suite.tap.bodies.length = 0;
      expect(await health('127.0.0.1', OPERATOR_TOKEN)).to.equal(unknown);
      expect(suite.tap.bodies).to.deep.equal([]);
      // Another peer is not held back by it.
      await health('127.0.0.2', OPERATOR_TOKEN);
      expect(suite.tap.methods()).to.deep.equal(['svc_nodeHealth']);
    } finally {
      await guarded.shutdown();
    }
  });

  it('lets svc_nodeHealth past the allowlist with the operator token', async () => {
    await rpc(suite.ingress.url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}` });
    expect(suite.tap.methods()).to.deep.equal(['svc_nodeHealth']);
  });

  for (const [label, header] of [
    ['two spaces after the scheme', `Bearer  ${OPERATOR_TOKEN}`],
    ['a tab after the scheme', `Bearer\t${OPERATOR_TOKEN}`],
    ['trailing spaces', `Bearer ${OPERATOR_TOKEN}  `],
  ] as const) {
    it(`accepts the token with ${label}`, async () => {
      await rpc(suite.ingress.url, 'svc_nodeHealth', [], 1, { authorization: header });
      expect(suite.tap.methods()).to.deep.equal(['svc_nodeHealth']);
    });
  }

  it('accepts the scheme in any case', async () => {
    await rpc(suite.ingress.url, 'svc_nodeHealth', [], 1, { authorization: `bearer ${OPERATOR_TOKEN}` });
    expect(suite.tap.methods()).to.deep.equal(['svc_nodeHealth']);
  });

  it('does not let the token unlock methods outside operator_methods', async () => {
    const reply = await rpc(suite.ingress.url, 'debug_traceTransaction', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}` });
    expect(JSON.parse(reply.text).error.code).to.equal(-32601);
    expect(suite.tap.bodies).to.deep.equal([]);
  });

  it('never writes the token to the log', async () => {
    await rpc(suite.ingress.url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}` });
    await rpc(suite.ingress.url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}x` });
    expect(suite.ingress.logs.length).to.be.greaterThan(0);
    expect(suite.ingress.logs.join('')).to.not.include(OPERATOR_TOKEN);
    // What an authorised call leaves at debug level: the method and the peer, nothing more.
    const authorised = suite.ingress.logs.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'operator method authorised');
    expect(authorised.at(-1)).to.include({ level: 'debug', method: 'svc_nodeHealth', peer: '127.0.0.1' });
  });
});
