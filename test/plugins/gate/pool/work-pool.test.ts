import { expect } from 'chai';
import { keccak256, Wallet } from 'ethers';
import { Piscina } from 'piscina';
import { checkFrameTransaction, decodeFrameTransaction } from '../../../../protocol/index.js';
import type { PoolSettings, SimulateAnswer, SimulateTask } from '../../../../plugins/gate/pool/pool-worker.js';
import { encodeFrameTx, p256HeavyFrames, selfTransfer } from '../../../../support/frames.js';
import { Agent, request } from 'undici';
import { rpc } from '../../../../support/http.js';
import { DEV_KEY, devTransfer } from '../../../../support/keys.js';
import { decodeUnrecovered } from '../../../../plugins/gate/submission/decode.js';
import { readRawTransaction } from '../../../../plugins/gate/submission/raw-transaction.js';
import { createWorkPool } from '../../../../plugins/gate/pool/work-pool.js';
import { startStubEl, type StubEl } from '../../../../support/stub-el.js';
import { APPROVE_3, ENDLESS_LOOP, REVERTS } from '../../../../support/verify-code.js';
import { within } from '../../../../support/within.js';
import { useAnvil } from '../../../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../../../helpers/ingress.js';

const P256 = 0x02;
const SENDER = '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf';

/** A well-formed frame transaction with `count` P256 entries that do not verify (r = s = 0). */
const p256Frames = (count: number) => {
  const fields = selfTransfer(SENDER, P256);
  fields.signatures = Array.from({ length: count }, () => ({ scheme: P256, signature: `0x${'00'.repeat(128)}` }));
  return encodeFrameTx(fields);
};

/** A smart account's transfer: [VERIFY flags 3 → its own code (90,000 gas), SENDER → 0xdede… with 1 wei]. */
const smartAccountTransfer = (sender: string) =>
  encodeFrameTx({
    sender,
    frames: [
      { mode: 1, flags: 3, executionGas: 90_000n },
      { mode: 2, flags: 0, target: `0x${'de'.repeat(20)}`, executionGas: 30_000n, value: 1n },
    ],
    signatures: [],
    fees: [0n, 2_000_000_000n, 0n],
  });

/** An ingress with `plugins` in front of its own anvil, for the suite. */
function useIngress(plugins: string): { readonly current: TestIngress; readonly elUrl: string } {
  const anvil = useAnvil();
  const holder = {} as { current: TestIngress; elUrl: string };
  before(async () => {
    holder.elUrl = anvil.current.url;
    holder.current = await startTestIngress(testConfig(anvil.current.url, plugins));
  });
  after(() => holder.current?.shutdown());
  return holder;
}

describe('gate: signature entries priced by verification gas and checked in worker threads', () => {
  const ingress = useIngress(`
  - batch-refuse
  - size-limit
  - allowlist
  - rate-limit:
      submissions:
        per_source: {rate_per_second: 1, burst: 3}
  - gate:
      head_cache_ms: 0
      threads: 1
`);

  const submit = async (raw: string) => JSON.parse((await rpc(ingress.current.url, 'eth_sendRawTransaction', [raw])).text);

  it('takes one token per 10,000 gas of validation prefix from the source, before verifying anything', async () => {
    // A 10,000-gas VERIFY frame and one P256 entry (6,700): 16,700 gas, two tokens (of 3);
    // verified in a worker thread: r = 0 is out of range.
    expect((await submit(p256Frames(1))).error).to.deep.equal({
      code: -32000,
      message: 'rejected: signature 0: r or s out of range (s must be low)',
      data: { reason: 'sig-invalid' },
    });
    // A standard transfer: the last token.
    const transfer = await new Wallet(DEV_KEY).signTransaction({
      chainId: 8141,
      nonce: 0,
      to: SENDER,
      value: 1n,
      gasLimit: 21_000,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 0n,
      type: 2,
    });
    expect(await submit(transfer)).to.deep.equal({ jsonrpc: '2.0', id: 1, result: keccak256(transfer) });
    // Two P256 entries (23,400 gas with the frame): the bucket is empty. Nothing verified, nothing cached.
    expect((await submit(p256Frames(2))).error).to.deep.include({
      code: -32005,
      message: 'rate limited: too many requests from this source; retry later',
    });
  });
});

/** A chain without rate-limit, one pool thread, and `option` for the gate. */
const poolOnly = (option: string) => `
  - batch-refuse
  - size-limit
  - allowlist
  - gate:
      head_cache_ms: 0
      threads: 1
      ${option}
`;

describe('gate: the worker pool refuses past queue_max waiting tasks', function () {
  this.timeout(30_000);
  // One thread taking one task at a time, one waiting: the third concurrent submission finds
  // the pool at capacity. No rate-limit plugin, so only the pool bound can refuse.
  const ingress = useIngress(poolOnly('queue_max: 1'));

  it('answers -32005 "at capacity" with HTTP 429 instead of queueing, and judges the rest', async () => {
    const replies = await Promise.all(p256HeavyFrames(24).map((raw) => rpc(ingress.current.url, 'eth_sendRawTransaction', [raw])));
    const busy = replies.filter((r) => r.status === 429);
    const judged = replies.filter((r) => r.status === 200);
    expect(busy.length + judged.length).to.equal(24);
    expect(busy).to.not.be.empty;
    expect(judged.length).to.be.at.least(2);
    for (const reply of busy) {
      expect(JSON.parse(reply.text)).to.deep.equal({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32005, message: 'rate limited: the endpoint is at capacity; retry later', data: { retry_after_ms: 1_000 } },
      });
    }
    // Every entry verified in the pool: the senders do not exist, so the verdict is about funds.
    for (const reply of judged) expect(JSON.parse(reply.text).error.data).to.deep.equal({ reason: 'payer-balance' });
  });
});

describe('gate: the worker pool serves sources in turn, each within its own queue', function () {
  this.timeout(30_000);
  // One thread; each source may have two tasks waiting. No rate-limit plugin: the gate serves
  // the TCP peer as the source.
  const ingress = useIngress(poolOnly('queue_per_source: 2'));

  const agents = [new Agent({ localAddress: '127.0.0.1' }), new Agent({ localAddress: '127.0.0.2' })];
  after(() => Promise.all(agents.map((agent) => agent.close())));
  const from = async (source: 0 | 1, raw: string) => {
    const reply = await request(ingress.current.url, {
      dispatcher: agents[source],
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
    });
    return { status: reply.statusCode, text: await reply.body.text() };
  };

  it("refuses a source past its own queue with the source's -32005, while another source is judged", async () => {
    const raws = p256HeavyFrames(13);
    const flood = Promise.all(raws.slice(0, 12).map((raw) => from(0, raw)));
    const victim = await from(1, raws[12]!);
    const replies = await flood;
    // Judged: the funds are missing, so the verdict is about them, never about capacity.
    expect(JSON.parse(victim.text).error.data).to.deep.equal({ reason: 'payer-balance' });
    const refused = replies.filter((r) => r.status === 429);
    // One running and two waiting at most when the rest arrive.
    expect(refused.length).to.be.at.least(6);
    for (const reply of refused) {
      expect(JSON.parse(reply.text).error).to.deep.equal({
        code: -32005,
        message: 'rate limited: too many requests from this source; retry later',
        data: { retry_after_ms: 1_000 },
      });
    }
  });
});

describe("gate: a pool thread's simulate answers with the compute time it took, whatever the outcome", () => {
  const SMART = `0x${'5a'.repeat(20)}`;
  /** Each account's code and nonce as the stub EL answers them; tests change them. */
  let codes: Record<string, string>;
  let nonce: string;
  let el: StubEl;
  const pools: Piscina[] = [];
  const answer = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });

  before(async () => {
    el = await startStubEl({
      eth_getTransactionCount: (id) => answer(id, nonce),
      eth_getBalance: (id) => answer(id, '0xde0b6b3a7640000'),
      eth_getCode: (id, params) => {
        const code = codes[(params as string[])[0]!];
        return code === 'fail'
          ? JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } })
          : answer(id, code ?? '0x');
      },
      eth_getStorageAt: (id) => answer(id, `0x${'00'.repeat(32)}`),
    });
  });
  after(async () => {
    await Promise.all(pools.map((pool) => pool.destroy()));
    await el?.close();
  });
  beforeEach(() => {
    codes = {};
    nonce = '0x1';
  });

  const poolWith = (simulationBudgetMs?: number) => {
    const settings: PoolSettings = {
      execution: { url: el.url, connections: 2, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 },
      ...(simulationBudgetMs === undefined ? {} : { simulationBudgetMs }),
    };
    const pool = new Piscina({
      filename: new URL('../../../../plugins/gate/pool/pool-worker.js', import.meta.url).href,
      maxThreads: 1,
      workerData: settings,
    });
    pools.push(pool);
    return pool;
  };
  let head = 100n;
  const simulate = async (pool: Piscina, code: string): Promise<SimulateAnswer> => {
    codes[SMART] ??= code;
    const tx = decodeFrameTransaction(smartAccountTransfer(SMART));
    const facts = checkFrameTransaction(tx, { chainId: 8141n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n });
    // A new head each time: nothing cached from an earlier test.
    const task: SimulateTask = {
      tx,
      facts,
      head: { number: head++, baseFee: 7n, timestamp: 1_700_000_000n, coinbase: `0x${'00'.repeat(20)}` },
    };
    return (await within(20_000, 'simulate', pool.run(task, { name: 'simulate' }))) as SimulateAnswer;
  };
  const shape = (answer: SimulateAnswer) => ({ keys: Object.keys(answer).sort(), computeMs: typeof answer.computeMs });

  it('admitted: { computeMs, dependencies } with what it read (for revalidation)', async () => {
    const answer = await simulate(poolWith(), APPROVE_3);
    expect(shape(answer)).to.deep.equal({ keys: ['computeMs', 'dependencies'], computeMs: 'number' });
    expect(answer.computeMs).to.be.within(0, 200);
    expect(answer.dependencies?.codes).to.deep.include([SMART, keccak256(APPROVE_3)]);
  });

  it('refused: { computeMs, refusal } with the refusal and what it read', async () => {
    const answer = await simulate(poolWith(), REVERTS);
    expect(shape(answer)).to.deep.equal({ keys: ['computeMs', 'refusal'], computeMs: 'number' });
    expect(answer.refusal).to.deep.include({
      reason: 'verify-rejected',
      detail: 'VERIFY frame 0: reverted',
      extra: { frame: 0, cause: 'reverted' },
    });
    expect(answer.refusal?.dependencies?.codes).to.deep.include([SMART, keccak256(REVERTS)]);
  });

  it('the EL unreadable: { computeMs, unavailable }', async () => {
    codes[SMART] = 'fail';
    const answer = await simulate(poolWith(), APPROVE_3);
    expect(answer).to.deep.equal({ computeMs: answer.computeMs, unavailable: 'eth_getCode: header not found' });
  });

  it('an unexpected error: { computeMs, refusal, bug }, the refusal naming only its class', async () => {
    nonce = '0xnot-a-number';
    const answer = await simulate(poolWith(), APPROVE_3);
    expect(shape(answer)).to.deep.equal({ keys: ['bug', 'computeMs', 'refusal'], computeMs: 'number' });
    expect(answer.refusal).to.deep.include({
      reason: 'verify-rejected',
      detail: 'VERIFY frame 0: simulation error: SyntaxError',
      extra: { frame: 0, cause: 'simulation error: SyntaxError' },
    });
    expect(answer.bug).to.match(/^SyntaxError: Cannot convert 0xnot-a-number to a BigInt at /);
  });

  it('past simulationBudgetMs (PoolSettings): refused over the simulation budget, its compute just past it', async () => {
    const answer = await simulate(poolWith(10), ENDLESS_LOOP);
    expect(answer.refusal).to.deep.include({
      reason: 'verify-rejected',
      detail: 'VERIFY frame 0: over the simulation budget (more than 10 ms of compute)',
      extra: { frame: 0, cause: 'over the simulation budget' },
    });
    expect(answer.computeMs).to.be.within(10, 60);
  });
});

describe('gate: a simulation past simulation_budget_ms is refused, and the refusal replayed', function () {
  this.timeout(30_000);
  const ingress = useIngress(poolOnly('simulation_budget_ms: 5'));
  const LOOPS = '0x00000000000000000000000000000000000100b5';

  it('answers "over the simulation budget" through the ingress, then the same marked as cached', async () => {
    for (const [method, params] of [
      ['anvil_setCode', [LOOPS, ENDLESS_LOOP]],
      ['anvil_setBalance', [LOOPS, '0xde0b6b3a7640000']],
      ['evm_mine', []],
    ] as const) {
      await rpc(ingress.elUrl, method, [...params]);
    }
    const raw = smartAccountTransfer(LOOPS);
    const refusal = {
      code: -32000,
      message: 'rejected: VERIFY frame 0: over the simulation budget (more than 5 ms of compute)',
      data: { reason: 'verify-rejected', frame: 0, cause: 'over the simulation budget' },
    };
    expect(JSON.parse((await rpc(ingress.current.url, 'eth_sendRawTransaction', [raw])).text).error).to.deep.equal(refusal);
    expect(JSON.parse((await rpc(ingress.current.url, 'eth_sendRawTransaction', [raw])).text).error).to.deep.equal({
      ...refusal,
      message: `${refusal.message} (cached verdict)`,
      data: { ...refusal.data, cached: true },
    });
  });
});

describe("gate: a standard transaction's sender recovered in a pool thread (where recovery runs in pure JS)", () => {
  const job = { source: '127.0.0.1', gone: () => false, spent: (_ms: number) => {} };
  const pool = createWorkPool({ threads: 1, queueMax: 8, queuePerSource: 4 }, { execution: { url: 'http://127.0.0.1:1' } as never });
  after(() => pool.close());

  it('answers the sender the transaction was signed by, or undefined for a signature no key made, and meters the time', async () => {
    const raw = readRawTransaction([await devTransfer(DEV_KEY, 7)]);
    const unrecovered = decodeUnrecovered(raw, {
      chainId: 8141n,
      blockGasLimit: 30_000_000n,
      prefixGasBudget: 100_000n,
      prefixStateGasBudget: 500_000n,
    });
    let spent = 0;
    const sender = await pool.recover(unrecovered.signature, { ...job, spent: (ms) => (spent += ms) });
    expect(sender).to.equal(new Wallet(DEV_KEY).address.toLowerCase());
    expect(spent).to.be.above(0);
    const broken = { ...unrecovered.signature, r: new Uint8Array(32).fill(0xff) };
    expect(await pool.recover(broken, job)).to.equal(undefined);
  });

  it("answers a type 0x04 transaction's authorities, metered: what the judge asks for past one authorization", async () => {
    const signers = [new Wallet(`0x${'51'.repeat(32)}`), new Wallet(`0x${'52'.repeat(32)}`)];
    const to = `0x${'ab'.repeat(20)}`;
    const authorizationList = await Promise.all(signers.map((w) => w.authorize({ address: to, nonce: 0, chainId: 8141 })));
    const raw = await new Wallet(DEV_KEY).signTransaction({
      type: 4,
      chainId: 8141,
      nonce: 0,
      to,
      gasLimit: 100_000,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 0n,
      authorizationList,
    });
    let spent = 0;
    const authorities = await pool.authorities(
      { bytes: readRawTransaction([raw]).bytes, chainId: 8141n },
      { ...job, spent: (ms) => (spent += ms) },
    );
    expect(authorities).to.deep.equal(signers.map((w) => w.address.toLowerCase()));
    expect(spent).to.be.above(0);
  });
});
