import { expect } from 'chai';
import { keccak256 } from 'ethers';
import type { FrameChain } from '../../devnet/frames/frame-chain.js';
import { startNodeStandIn } from '../../devnet/node.js';
import { call, receiptOf } from '../../support/http.js';
import { DEV_KEYS, devTransfer } from '../../support/keys.js';
import { useAnvil } from '../helpers/el.js';

describe('devnet: the node stand-in when closing a block fails', () => {
  const anvil = useAnvil({ extraArgs: ['--no-mining'] });

  it('still answers and orders later submissions, and counts the frame transactions it could not execute', async function () {
    this.timeout(20_000);
    let closes = 0;
    // Execution fails once, as a broken EL write would; the stand-in must not stop ordering.
    const frames = {
      whileClosing: <T>(close: () => Promise<T>) => close(),
      closeBlock: async () => {
        if (closes++ === 0) throw new Error('anvil_setBalance failed');
        return [];
      },
    } as unknown as FrameChain;
    const node = await startNodeStandIn({ elUrl: anvil.current.url, frames, commitIntervalMs: 20, blockIntervalMs: 0 });
    const write = process.stderr.write;
    const errors: string[] = [];
    process.stderr.write = ((text: string) => {
      errors.push(String(text));
      return true;
    }) as typeof process.stderr.write;
    try {
      const frame = '0x06c0';
      expect(await call(node.url, 'eth_sendRawTransaction', [frame])).to.equal(keccak256(frame));
      const transfer = await devTransfer(DEV_KEYS[1]!, 0);
      // Ordered after the failed close, answered, and mined by the next block.
      expect(await call(node.url, 'eth_sendRawTransaction', [transfer])).to.equal(keccak256(transfer));
      expect((await receiptOf(anvil.current.url, keccak256(transfer))).status).to.equal('0x1');
      const stats = await call<{ driver: Record<string, number>; el: Record<string, number> }>(node.url, 'svc_dropStats');
      expect(stats.el.other).to.equal(1);
      expect(errors.join('')).to.include('devnet node stand-in: closing an EL block failed: Error: anvil_setBalance failed');
    } finally {
      process.stderr.write = write;
      await node.stop();
    }
  });
});
