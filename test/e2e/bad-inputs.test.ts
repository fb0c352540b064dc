/**
 * The bad-input corpus (test/fixtures/bad-inputs.jsonl, one case a line): each gets its
 * documented HTTP status and JSON-RPC code, the EL sees only what the case allows, and the
 * ingress keeps answering afterwards.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { rpc } from '../../support/http.js';
import { useTappedIngress } from '../helpers/tap.js';

interface BadInput {
  name: string;
  body?: string;
  bodyBase64?: string;
  method?: string;
  headers?: Record<string, string>;
  status: number;
  /** The JSON-RPC error code, or null for a transport refusal or a served request. */
  code: number | null;
  /** The id the answer must carry, when the case has one. */
  id?: unknown;
  /** Whether the EL may see the request at all. */
  upstream: boolean;
}

const CASES: BadInput[] = readFileSync('test/fixtures/bad-inputs.jsonl', 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line) as BadInput);

describe('bad inputs: the documented answer, no crash, nothing the EL should not see', () => {
  const suite = useTappedIngress();

  for (const input of CASES) {
    it(`${input.name}: HTTP ${input.status}${input.code === null ? '' : `, ${input.code}`}`, async () => {
      const body = input.bodyBase64 !== undefined ? Buffer.from(input.bodyBase64, 'base64') : (input.body ?? '');
      const method = input.method ?? 'POST';
      const reply = await request(suite.ingress.url, {
        method: method as 'POST',
        headers: input.headers ?? { 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : body,
      });
      const text = await reply.body.text();
      expect(reply.statusCode).to.equal(input.status);
      if (input.status === 200 || input.code !== null) {
        const answer = JSON.parse(text);
        const single = Array.isArray(answer) ? answer[0] : answer;
        if (input.code === null) expect(single.error, text).to.equal(undefined);
        else expect(single.error?.code, text).to.equal(input.code);
        if ('id' in input) expect(single.id).to.deep.equal(input.id);
      }
      if (!input.upstream)
        expect(
          suite.tap.methods().filter((m) => m !== 'eth_getBlockByNumber' && m !== 'eth_getTransactionCount' && m !== 'eth_getBalance'),
        ).to.deep.equal([]);
    });
  }

  it('still answers after the whole corpus', async () => {
    expect((await rpc(suite.ingress.url, 'eth_chainId')).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
  });
});
