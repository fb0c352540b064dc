/**
 * The execution-apis request corpus through the ingress: allowlisted requests get exactly what
 * the EL answers directly (byte for byte); the rest get the allowlist's refusal and never reach
 * the EL. anvil mines only on transactions, so its state holds still between the two calls.
 */
import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { readFileSync } from 'node:fs';
import { NODE_LOCAL_METHODS, PROXIED_SVC_METHODS, READ_METHODS, SUBMISSION_METHOD } from '../../src/methods.js';
import { post } from '../helpers/http.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { useTappedIngress } from '../helpers/tap.js';

interface Case {
  source: string;
  request: { id: unknown; method: string; params?: unknown[] };
}

const CORPUS: Case[] = readFileSync('test/fixtures/execution-apis-requests.jsonl', 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Case);

const ALLOWLISTED = new Set<string>([...READ_METHODS, ...PROXIED_SVC_METHODS, SUBMISSION_METHOD, ...NODE_LOCAL_METHODS]);
/**
 * anvil builds this answer from a hash map: the order of its keys changes from one call to the
 * next, direct or not. It is compared as parsed JSON; every other answer byte for byte.
 */
const UNORDERED_ANSWERS = new Set(['eth_getStorageValues']);
/** Answered by plugins rather than streamed; each is checked against its own rule below. */
const ANSWERED_BY_PLUGINS = new Set(['eth_sendRawTransaction', 'eth_gasPrice', 'eth_maxPriorityFeePerGas', 'eth_feeHistory']);

describe('transparency: the execution-apis corpus through the ingress', () => {
  const suite = useTappedIngress();

  it(`holds ${CORPUS.length} requests`, () => {
    expect(CORPUS).to.have.length(236);
  });

  const direct = async (body: string) => (await post(suite.anvil.url, body)).text;

  for (const { source, request } of CORPUS) {
    const body = JSON.stringify(request);
    const { method } = request;

    if (!ALLOWLISTED.has(method)) {
      it(`${source}: refused with -32601, never reaching the EL`, async () => {
        const reply = await post(suite.ingress.url, body);
        expect(reply.text).to.equal(
          JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'the method does not exist/is not available' } }),
        );
        expect(suite.tap.bodies).to.deep.equal([]);
      });
    } else if (!ANSWERED_BY_PLUGINS.has(method)) {
      it(`${source}: the EL's own answer, byte for byte`, async () => {
        const expected = await direct(body);
        const reply = await post(suite.ingress.url, body);
        expect(reply.status).to.equal(200);
        if (UNORDERED_ANSWERS.has(method)) expect(JSON.parse(reply.text)).to.deep.equal(JSON.parse(expected));
        else expect(reply.text).to.equal(expected);
      });
    } else if (method === 'eth_feeHistory') {
      it(`${source}: the EL's answer with every reward reported as 0x0`, async () => {
        const expected = JSON.parse(await direct(body));
        const reply = JSON.parse((await post(suite.ingress.url, body)).text);
        if (expected.result?.reward) {
          expected.result.reward = expected.result.reward.map((row: string[]) => row.map(() => '0x0'));
        }
        expect(reply).to.deep.equal(expected);
      });
    } else if (method === 'eth_sendRawTransaction') {
      it(`${source}: judged by the gate, never answered with a hash it did not compute`, async () => {
        const reply = JSON.parse((await post(suite.ingress.url, body)).text);
        const raw = String(request.params?.[0]);
        if ('result' in reply) expect(reply.result).to.equal(keccak256(raw));
        // Signed for another chain, the gate refuses them itself; the blob one (137,725 bytes
        // with its sidecar) is over the 128 KiB limit before that.
        else if ((raw.length - 2) / 2 > 128 * 1024) expect(reply.error).to.deep.equal({ code: -32602, message: 'oversized transaction' });
        else expect(reply.error.code).to.equal(-32000);
        expect(suite.tap.methods()).to.not.include('eth_sendRawTransaction');
      });
    } else {
      it(`${source}: answered fee-blind`, async () => {
        const reply = JSON.parse((await post(suite.ingress.url, body)).text);
        if (method === 'eth_maxPriorityFeePerGas') expect(reply.result).to.equal('0x0');
        else {
          const block = JSON.parse(await direct('{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["latest",false]}'));
          expect(reply.result).to.equal(block.result.baseFeePerGas);
        }
      });
    }
  }
});
