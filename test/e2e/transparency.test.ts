/**
 * Transparency over the public execution-apis request corpus (test/fixtures/README.md): anvil
 * (automine, so its state holds still between two identical calls), a recording tap in front of
 * it, the production ingress in front of the tap. For every request of the corpus:
 *
 * - allowlisted and streamed: the identical body sent to anvil directly and through the ingress
 *   gets the identical answer, byte for byte (HTTP status included), and the EL saw the request;
 * - outside the allowlist: the ingress answers the exact -32601 refusal with the request's id,
 *   and nothing reaches the EL;
 * - answered by a plugin (eth_feeHistory, eth_sendRawTransaction; the corpus holds neither
 *   eth_gasPrice nor eth_maxPriorityFeePerGas, checked after it): by that plugin's rule.
 */
import { expect } from 'chai';
import { keccak256, Transaction, Wallet, type TransactionLike } from 'ethers';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROXIED_SVC_METHODS, READ_METHODS, SUBMISSION_METHOD } from '../../src/methods.js';
import { secpAccount, selfTransfer, signed } from '../../support/frames.js';
import { call, post, receiptOf, rpc } from '../../support/http.js';
import { DEV_KEYS } from '../../support/keys.js';
import { PRODUCTION_PLUGINS } from '../helpers/ingress.js';
import { useTappedIngress } from '../helpers/tap.js';

interface Case {
  readonly source: string;
  readonly request: { readonly jsonrpc: string; readonly id: unknown; readonly method: string; readonly params?: unknown };
}

/** Read from this repository's copy (tests run from the repository root), never from elsewhere. */
const CORPUS: Case[] = readFileSync(join(process.cwd(), 'test/fixtures/execution-apis-requests.jsonl'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Case);

/** What the allowlist passes (the node-local svc_ methods aside: the corpus has none, checked below). */
const ALLOWLISTED = new Set<string>([...READ_METHODS, ...PROXIED_SVC_METHODS, SUBMISSION_METHOD]);
/** Answered by the gate and fee-rewrite plugins themselves rather than streamed. */
const ANSWERED_BY_PLUGINS = new Set(['eth_sendRawTransaction', 'eth_gasPrice', 'eth_maxPriorityFeePerGas', 'eth_feeHistory']);
const SIGNING_METHODS = new Set([
  'eth_sendTransaction',
  'eth_sign',
  'eth_signTransaction',
  'eth_signTypedData',
  'eth_signTypedData_v1',
  'eth_signTypedData_v3',
  'eth_signTypedData_v4',
]);

const refusal = (id: unknown, method: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: SIGNING_METHODS.has(method)
      ? {
          code: -32601,
          message: 'the method is not supported: this endpoint holds no keys; sign in the client and use eth_sendRawTransaction',
        }
      : { code: -32601, message: 'the method does not exist/is not available' },
  });

/**
 * The one normalisation. Not a timing field: anvil builds the eth_getStorageValues result from a
 * hash map, so with two or more addresses the order of its keys differs from one call to the
 * next, directly or not (seen with the corpus's get-storage-values-multiple-addresses). Only that
 * method's `result` keys are put in order; every other answer is compared exactly as sent. No
 * answer of the corpus carries a timing-dependent field against this chain: anvil's blocks are
 * mined before the corpus runs, and eth_simulateV1 derives its timestamps from the parent block.
 */
function normalise(method: string, text: string): string {
  if (method !== 'eth_getStorageValues') return text;
  const answer = JSON.parse(text) as { result?: unknown };
  if (answer.result === null || typeof answer.result !== 'object' || Array.isArray(answer.result)) return text;
  const result = answer.result as Record<string, unknown>;
  const sorted = Object.fromEntries(
    Object.keys(result)
      .sort()
      .map((k) => [k, result[k]]),
  );
  return JSON.stringify({ ...answer, result: sorted });
}

/** Titles: the fixture's source, numbered where one source holds several requests. */
const TITLES = (() => {
  const total = new Map<string, number>();
  for (const { source } of CORPUS) total.set(source, (total.get(source) ?? 0) + 1);
  const seen = new Map<string, number>();
  return CORPUS.map(({ source, request }) => {
    const n = (seen.get(source) ?? 0) + 1;
    seen.set(source, n);
    return total.get(source)! > 1 ? `${source} #${n} (${request.method})` : source;
  });
})();

// --- Chain contents the corpus can find --------------------------------------------------------

/** The corpus's own contract address and log topics ("emit" and one indexed value). */
const CORPUS_CONTRACT = '0x7dcd17433742f4c0ca53122ab541d0ba67fc27df';
const EMIT_TOPIC = '0x00000000000000000000000000000000000000000000000000000000656d6974';
const INDEXED_TOPIC = '0x95b7276947f6331672b0c63eca28c1d39f25286d5e2793d6a487837ff1475ba0';
/** Runtime code: memory[0..32] = 42; LOG2(offset 0, size 32, EMIT_TOPIC, INDEXED_TOPIC); STOP. */
const EMITTER_RUNTIME = `0x602a600052 7f${INDEXED_TOPIC.slice(2)} 7f${EMIT_TOPIC.slice(2)} 6020 6000 a2 00`.replace(/ /g, '');
/** Init code: emits LOG1(EMIT_TOPIC) over memory[0..32] = 42 while creating, and deploys nothing. */
const CREATION_LOGGING = `0x602a600052 7f${EMIT_TOPIC.slice(2)} 6020 6000 a1 00`.replace(/ /g, '');
const SEEDED_BLOCKS = 40;
const GWEI = 1_000_000_000n;

/** The seed transaction with this nonce: a log-emitting call, legacy, access-list and creation in turn. */
function seedTransaction(nonce: number): TransactionLike {
  const tip = BigInt(nonce + 1) * GWEI;
  switch (nonce % 4) {
    case 0:
      return { type: 2, to: CORPUS_CONTRACT, gasLimit: 100_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: tip };
    case 1:
      return { type: 0, to: '0xaa00000000000000000000000000000000000000', value: 1n, gasLimit: 21_000, gasPrice: 50n * GWEI };
    case 2:
      return {
        type: 1,
        to: '0xc1cadaffffffffffffffffffffffffffffffffff',
        value: 2n,
        gasLimit: 50_000,
        gasPrice: 50n * GWEI,
        accessList: [{ address: CORPUS_CONTRACT, storageKeys: [`0x${'0'.repeat(64)}`] }],
      };
    default:
      return { type: 2, data: CREATION_LOGGING, gasLimit: 100_000, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: tip };
  }
}

describe('e2e: transparency over the execution-apis request corpus', function () {
  this.timeout(30_000);
  // The shipped limits: the corpus's 91 eth_simulateV1 requests pass as they are, those naming no
  // gas in up to 20 calls too (they share one rpc_gas_cap, as geth's simulation runs them; until
  // issue 37 each counted at the cap, and 8 were refused -32602).
  const suite = useTappedIngress(PRODUCTION_PLUGINS);
  const seeder = new Wallet(DEV_KEYS[0]);

  /**
   * Before the corpus runs, directly at anvil (the ingress is not under test here): the corpus's
   * contract address gets code that logs the corpus's topics and a storage slot, and 40 blocks are
   * mined, one transaction each, of every standard type and with growing priority fees. The
   * corpus's block numbers, log filters, code, storage and fee-history reward percentiles then
   * find real data rather than nulls. After this, nothing changes the chain until the corpus is
   * done.
   */
  before(async () => {
    const anvil = suite.anvil.url;
    await call(anvil, 'anvil_setCode', [CORPUS_CONTRACT, EMITTER_RUNTIME]);
    await call(anvil, 'anvil_setStorageAt', [CORPUS_CONTRACT, '0x0', `0x${'2a'.padStart(64, '0')}`]);
    for (let nonce = 0; nonce < SEEDED_BLOCKS; nonce++) {
      const raw = await seeder.signTransaction({ ...seedTransaction(nonce), chainId: 8141, nonce });
      const hash = await call<string>(anvil, 'eth_sendRawTransaction', [raw]);
      const receipt = await receiptOf(anvil, hash);
      expect(receipt.status, `seed transaction ${nonce}`).to.equal('0x1');
    }
    expect(Number(await call<string>(anvil, 'eth_blockNumber'))).to.equal(SEEDED_BLOCKS);
  });

  const direct = (body: string) => post(suite.anvil.url, body);
  const throughIngress = (body: string) => post(suite.ingress.url, body);

  it(`holds ${CORPUS.length} requests, each a JSON-RPC 2.0 object, none of them a node-local svc_ method`, () => {
    expect(CORPUS).to.have.length(236);
    for (const { request } of CORPUS) {
      expect(request.jsonrpc).to.equal('2.0');
      expect(request.method.startsWith('svc_'), request.method).to.equal(false);
    }
  });

  describe('allowlisted reads: the answer anvil gives directly, byte for byte', () => {
    CORPUS.forEach(({ request }, i) => {
      if (!ALLOWLISTED.has(request.method) || ANSWERED_BY_PLUGINS.has(request.method)) return;
      const body = JSON.stringify(request);
      it(TITLES[i]!, async () => {
        const expected = await direct(body);
        const reply = await throughIngress(body);
        expect(reply.status).to.equal(expected.status);
        expect(normalise(request.method, reply.text)).to.equal(normalise(request.method, expected.text));
        // And the EL was asked exactly these bytes, once.
        expect(suite.tap.bodies).to.deep.equal([body]);
      });
    });
  });

  describe('methods outside the allowlist: the exact -32601 refusal, never reaching the EL', () => {
    CORPUS.forEach(({ request }, i) => {
      if (ALLOWLISTED.has(request.method)) return;
      it(TITLES[i]!, async () => {
        const reply = await throughIngress(JSON.stringify(request));
        expect(reply.status).to.equal(200);
        expect(reply.text).to.equal(refusal(request.id, request.method));
        expect(suite.tap.bodies).to.deep.equal([]);
      });
    });
  });

  describe('eth_feeHistory: the answer anvil gives directly, with every reward percentile 0x0', () => {
    CORPUS.forEach(({ request }, i) => {
      if (request.method !== 'eth_feeHistory') return;
      const body = JSON.stringify(request);
      it(TITLES[i]!, async () => {
        const expected = JSON.parse((await direct(body)).text) as { result?: { reward?: string[][] } };
        const reply = JSON.parse((await throughIngress(body)).text) as unknown;
        // The seeded blocks paid priority fees, so there is something to zero.
        const rewards = expected.result?.reward ?? [];
        expect(
          rewards.flat().some((r) => r !== '0x0'),
          JSON.stringify(expected),
        ).to.equal(true);
        expected.result!.reward = rewards.map((row) => row.map(() => '0x0'));
        // Compared as JSON values, not bytes: the plugin re-serialises the EL's answer, and
        // anvil's float `"blobGasUsedRatio":[0.0]` comes out as the equal number `[0]`.
        expect(reply).to.deep.equal(expected);
        expect(
          suite.tap.bodies
            .map((b) => JSON.parse(b) as { method: string; params: unknown })
            .filter((b) => b.method === 'eth_feeHistory')
            .map((b) => b.params),
        ).to.deep.equal([request.params]);
      });
    });
  });

  /**
   * The answer is keccak-256 of the raw bytes (admitted and accepted by the EL), or the EL's own
   * error object unchanged (admitted by the gate, refused by the EL), or, as for every submission
   * of this corpus (signed for another chain, or a blob transaction over 128 KiB), a refusal of
   * the ingress itself (spec 4.3, 4.4, 7) before the EL is asked to take it.
   */
  const expectSubmissionAnswer = async (request: Case['request'], text: string) => {
    const reply = JSON.parse(text) as {
      id?: unknown;
      result?: unknown;
      error?: { code: number; message: string; data?: { reason?: unknown } };
    };
    const raw = (request.params as [string])[0];
    expect(reply.id).to.deep.equal(request.id);
    const forwarded = suite.tap.bodies.filter((b) => (JSON.parse(b) as { method: string }).method === 'eth_sendRawTransaction');
    if ('result' in reply) {
      expect(reply.result).to.equal(keccak256(raw));
      // The EL took exactly these bytes, once.
      expect(forwarded.map((b) => (JSON.parse(b) as { params: unknown }).params)).to.deep.equal([[raw]]);
    } else if (forwarded.length > 0) {
      // The EL refused it: the ingress passes the EL's error object on unchanged. Refused, the
      // bytes left anvil's state as it was, so asking anvil again gives the same answer.
      const own = (await direct(JSON.stringify(request))).text;
      expect(JSON.parse(own), 'anvil refuses it directly too').to.have.property('error');
      expect(text).to.equal(own);
    } else if ((raw.length - 2) / 2 > 128 * 1024) {
      expect(reply.error).to.deep.equal({ code: -32602, message: 'oversized transaction', data: { max_bytes: 131072 } });
    } else {
      expect(reply.error!.code).to.equal(-32000);
      expect(reply.error!.message).to.match(/^rejected: /);
      expect(reply.error!.data?.reason).to.be.a('string');
      if (Transaction.from(raw).chainId !== 8141n) expect(reply.error!.data!.reason).to.equal('wrong-chain-id');
    }
  };

  describe("eth_sendRawTransaction: keccak-256 of the raw bytes, the EL's own error, or the gate's refusal", () => {
    CORPUS.forEach(({ request }, i) => {
      if (request.method !== 'eth_sendRawTransaction') return;
      it(TITLES[i]!, async () => {
        const reply = await throughIngress(JSON.stringify(request));
        expect(reply.status).to.equal(200);
        await expectSubmissionAnswer(request, reply.text);
      });
    });
  });

  // Runs after the corpus (mocha runs a suite's nested suites in order): the last case mines a block.
  describe('beyond the corpus: the plugin answers it does not exercise', () => {
    it('eth_maxPriorityFeePerGas is answered 0x0 by the ingress, without asking the EL', async () => {
      const reply = await rpc(suite.ingress.url, 'eth_maxPriorityFeePerGas', [], 7);
      expect(reply.text).to.equal('{"jsonrpc":"2.0","id":7,"result":"0x0"}');
      expect(suite.tap.bodies).to.deep.equal([]);
    });

    it("eth_gasPrice is the latest block's base fee as anvil reports it", async () => {
      const latest = await call<{ baseFeePerGas: string }>(suite.anvil.url, 'eth_getBlockByNumber', ['latest', false]);
      const reply = await rpc(suite.ingress.url, 'eth_gasPrice', [], 8);
      expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 8, result: latest.baseFeePerGas }));
      expect(suite.tap.methods()).to.not.include('eth_gasPrice');
    });

    it("a submission the gate admits and anvil refuses (a frame transaction: stock anvil has no type 0x06) gets anvil's own error", async () => {
      const account = secpAccount();
      await call(suite.anvil.url, 'anvil_setBalance', [account.address, '0xde0b6b3a7640000']);
      const raw = signed(selfTransfer(account.address, 0x01), [account.sign]);
      const request = { jsonrpc: '2.0', id: 9, method: 'eth_sendRawTransaction', params: [raw] };
      const reply = await throughIngress(JSON.stringify(request));
      expect(suite.tap.methods()).to.include('eth_sendRawTransaction');
      expect(JSON.parse(reply.text)).to.have.property('error');
      await expectSubmissionAnswer(request, reply.text);
    });

    it('a valid chain-8141 transfer is answered with keccak-256 of its raw bytes, the hash it is mined under', async () => {
      const raw = await new Wallet(DEV_KEYS[2]).signTransaction({
        type: 2,
        chainId: 8141,
        nonce: 0,
        to: '0x000000000000000000000000000000000000dEaD',
        value: 1n,
        gasLimit: 21_000,
        maxFeePerGas: 100n * GWEI,
        maxPriorityFeePerGas: 0n,
      });
      const request = { jsonrpc: '2.0', id: 10, method: 'eth_sendRawTransaction', params: [raw] };
      const reply = await throughIngress(JSON.stringify(request));
      expect(JSON.parse(reply.text)).to.have.property('result');
      await expectSubmissionAnswer(request, reply.text);
      const receipt = await receiptOf(suite.anvil.url, keccak256(raw));
      expect(receipt.transactionHash).to.equal(Transaction.from(raw).hash);
      expect(receipt.status).to.equal('0x1');
    });
  });
});
