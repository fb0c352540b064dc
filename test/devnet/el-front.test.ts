import { expect } from 'chai';
import { startElFront, type ElFront } from '../../devnet/el-front.js';
import { FrameChain } from '../../devnet/frames/frame-chain.js';
import { call, rpc } from '../../support/http.js';
import { useAnvil } from '../helpers/el.js';

describe("devnet: the EL front (what the chain's own EL answers and anvil does not)", () => {
  const anvil = useAnvil();
  let front: ElFront;

  before(async () => {
    front = await startElFront({ anvilUrl: anvil.current.url, witnessWindowBlocks: 3 });
    await call(anvil.current.url, 'anvil_mine', ['0xa']);
  });
  after(() => front?.close());

  const pruned = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, error: { code: 4444, message: 'pruned history unavailable' } });

  it('answers svc_historyStatus (spec 2.1) from the chain it serves', async () => {
    expect(await call(front.url, 'svc_historyStatus')).to.deep.equal({
      tier: 'tx-history',
      headBlock: '0xa',
      earliestFullBody: '0x7',
      historyCutoff: '0x0',
      persistedState: '0x0',
    });
  });

  it('answers 4444 for block-scoped reads below the witness window, and passes those within it to anvil', async () => {
    expect((await rpc(front.url, 'eth_getBlockReceipts', ['0x1'], 4)).text).to.equal(pruned(4));
    expect((await rpc(front.url, 'eth_getTransactionByBlockNumberAndIndex', ['earliest', '0x0'], 5)).text).to.equal(pruned(5));
    const early = await call<{ hash: string }>(anvil.current.url, 'eth_getBlockByNumber', ['0x2', false]);
    expect((await rpc(front.url, 'eth_getBlockTransactionCountByHash', [early.hash], 6)).text).to.equal(pruned(6));
    expect((await rpc(front.url, 'eth_getLogs', [{ fromBlock: '0x0' }], 7)).text).to.equal(pruned(7));
    // Within the window: exactly anvil's answers.
    for (const [method, params] of [
      ['eth_getBlockReceipts', ['0x8']],
      ['eth_getLogs', [{ fromBlock: '0x9' }]],
      ['eth_getBlockTransactionCountByNumber', ['latest']],
    ] as const) {
      expect((await rpc(front.url, method, [...params], 8)).text, method).to.equal(
        (await rpc(anvil.current.url, method, [...params], 8)).text,
      );
    }
  });

  it('passes every other call to anvil unchanged, malformed ones included', async () => {
    for (const body of ['{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', '{"jsonrpc":"2.0","id":1,"method":', '[]']) {
      const direct = await fetch(anvil.current.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const through = await fetch(front.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect([through.status, await through.text()], body).to.deep.equal([direct.status, await direct.text()]);
    }
  });

  it('holds its answers while a block closes, so nobody sees the block before its frame transactions', async () => {
    const frames = new FrameChain(anvil.current.url);
    const withFrames = await startElFront({ anvilUrl: anvil.current.url, witnessWindowBlocks: 3, frames });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let answered = false;
      const closing = frames.whileClosing(async () => {
        await call(anvil.current.url, 'evm_mine');
        await released;
      });
      const head = call<string>(withFrames.url, 'eth_blockNumber').then((number) => {
        answered = true;
        return number;
      });
      // Round trips to anvil, each longer than the front takes to pass a call on.
      for (let i = 0; i < 5; i++) await call(anvil.current.url, 'eth_chainId');
      expect(answered, 'answered during the close').to.equal(false);
      release();
      await closing;
      expect(await head).to.equal(await call<string>(anvil.current.url, 'eth_blockNumber'));
    } finally {
      await withFrames.close();
    }
  });
});
