import { expect } from 'chai';
import { keccak256, Wallet } from 'ethers';
import { encodeFrameTx, p256HeavyFrames, selfTransfer } from '../../../support/frames.js';
import { Agent, request } from 'undici';
import { rpc } from '../../../support/http.js';
import { DEV_KEY } from '../../../support/keys.js';
import { useAnvil } from '../../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../../helpers/ingress.js';

const P256 = 0x02;
const SENDER = '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf';

/** A well-formed frame transaction with `count` P256 entries that do not verify (r = s = 0). */
const p256Frames = (count: number) => {
  const fields = selfTransfer(SENDER, P256);
  fields.signatures = Array.from({ length: count }, () => ({ scheme: P256, signature: `0x${'00'.repeat(128)}` }));
  return encodeFrameTx(fields);
};

/** An ingress with `plugins` in front of its own anvil, for the suite. */
function useIngress(plugins: string): { readonly current: TestIngress } {
  const anvil = useAnvil();
  const holder = {} as { current: TestIngress };
  before(async () => {
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
