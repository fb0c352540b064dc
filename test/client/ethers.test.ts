/** The module's ethers helpers on the devnet: sent and read back without ethers' parser. */
import { expect } from 'chai';
import { JsonRpcProvider } from 'ethers';
import {
  estimateFrameGas,
  type FrameTransaction,
  frameTransactionHash,
  secp256k1Signer,
  signFrameTransaction,
  withFrameGas,
} from '../../client/index.js';
import { ethersRequest, getFrameTransaction, sendFrameTransaction, waitForFrameReceipt } from '../../client/ethers.js';
import { fund, useDevnet } from '../helpers/devnet.js';

describe('client/ethers: frame transactions through provider.send, on the devnet', () => {
  const devnet = useDevnet();
  let provider: JsonRpcProvider;
  before(() => {
    provider = new JsonRpcProvider(devnet.current.ingress.url, 8141, { staticNetwork: true, batchMaxCount: 1 });
  });
  after(() => provider?.destroy());

  it('sends an estimated secp256k1 frame transfer, answers its hash, and reads the transaction and receipt', async () => {
    const signer = secp256k1Signer(`0x${'62'.repeat(32)}`);
    await fund(devnet.current, signer.address);
    const draft: FrameTransaction = {
      from: signer.address,
      maxFeePerGas: 3_000_000_000n,
      frames: [
        { mode: 1, flags: 3 },
        { mode: 2, target: '0x00000000000000000000000000000000000c1e79', value: 12n },
      ],
      signatures: [{ scheme: 0x01 }],
    };
    const tx = signFrameTransaction(withFrameGas({ ...draft, nonce: 0n }, await estimateFrameGas(ethersRequest(provider), draft)), [
      signer,
    ]);
    const hash = await sendFrameTransaction(provider, tx);
    expect(hash).to.equal(frameTransactionHash(tx));
    const receipt = await waitForFrameReceipt(provider, hash, { timeoutMs: 30_000, pollMs: 100 });
    expect(receipt).to.deep.include({ status: 'success', payer: signer.address, transactionHash: hash });
    expect(receipt.frameReceipts.map((f) => f.status)).to.deep.equal(['success', 'success']);
    const read = await getFrameTransaction(provider, hash);
    expect(read).to.deep.include({ type: 'frame', hash, from: signer.address, nonce: 0n, blockNumber: receipt.blockNumber });
    expect(read!.signatures[0]!.signature).to.equal(tx.signatures![0]!.signature);
  });
});
