/** viem on the devnet with the module's chain: frame transactions and receipts read typed. */
import { expect } from 'chai';
import { createPublicClient, http } from 'viem';
import {
  estimateFrameGas,
  type FrameTransaction,
  mldsa65Signer,
  signFrameTransaction,
  withFrameGas,
  encodeFrameTransaction,
} from '../../client/index.js';
import { chain8141, viemRequest } from '../../client/viem.js';
import { fund, useDevnet } from '../helpers/devnet.js';

const RECIPIENT = '0x00000000000000000000000000000000000c1e78';

describe('client/viem: chain 8141 with frame formatters, on the devnet', () => {
  const devnet = useDevnet();

  it('sends an estimated ML-DSA-65 transfer and reads it back: type frame, its frames, payer and frame receipts', async () => {
    const client = createPublicClient({ chain: chain8141(devnet.current.ingress.url), transport: http() });
    const signer = mldsa65Signer(`0x${'61'.repeat(32)}`);
    await fund(devnet.current, signer.address);
    const draft: FrameTransaction = {
      from: signer.address,
      maxFeePerGas: 3_000_000_000n,
      frames: [
        { mode: 1, flags: 3 },
        { mode: 2, target: RECIPIENT, value: 11n },
      ],
      signatures: [{ scheme: 0x65 }],
    };
    const tx = signFrameTransaction(withFrameGas({ ...draft, nonce: 0n }, await estimateFrameGas(viemRequest(client), draft)), [signer]);
    const hash = await client.sendRawTransaction({ serializedTransaction: encodeFrameTransaction(tx) });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100, timeout: 30_000 });
    expect(receipt.status).to.equal('success');
    expect(receipt.payer).to.equal(signer.address);
    expect(receipt.frameReceipts?.map((f) => f.status)).to.deep.equal(['success', 'success']);
    const read = await client.getTransaction({ hash });
    expect(read).to.deep.include({ type: 'frame', hash, from: signer.address, to: null, value: 0n, nonce: 0n });
    expect(read.frames?.[1]).to.deep.equal({ ...tx.frames[1], flags: 0, data: '0x' });
    const block = await client.getBlock({ blockHash: receipt.blockHash, includeTransactions: true });
    expect(block.transactions.at(-1)).to.deep.include({ type: 'frame', hash });
  });
});
