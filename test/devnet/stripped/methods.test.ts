import { verifyMerkleProof } from '@ethereumjs/mpt';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { expect } from 'chai';
import { id, keccak256, Wallet } from 'ethers';
import { startElFront, type ElFront } from '../../../devnet/el-front.js';
import { FrameChain } from '../../../devnet/frames/frame-chain.js';
import { rpcClient } from '../../../devnet/rpc.js';
import { restore } from '../../../devnet/stripped/strip.js';
import { indexKey } from '../../../devnet/stripped/stripped-blocks.js';
import { secp256k1Entry, signed } from '../../../support/frames.js';
import { call, rpc } from '../../../support/http.js';
import { DEV_KEY } from '../../../support/keys.js';
import { useAnvil } from '../../helpers/el.js';

interface StrippedTransaction {
  transactionHash: string;
  blockHash: string;
  blockNumber: string;
  transactionIndex: string;
  strippedTransaction: string;
  strippedTransactionsRoot: string;
  proof: string[];
}
interface Sidecar {
  blockHash: string;
  blockNumber: string;
  transactions: Array<{ transactionHash: string; witness: string[] }>;
}

describe('devnet: the stripped store on the EL front (svc_getStrippedTransaction, svc_getSignatureSidecar)', () => {
  const anvil = useAnvil();
  let front: ElFront;
  let chain: FrameChain;
  const hashes: string[] = [];
  const dev = new Wallet(DEV_KEY);
  const frameSender = new Wallet(id('stripped methods frame sender'));

  before(async () => {
    const el = rpcClient(anvil.current.url);
    chain = new FrameChain(anvil.current.url);
    front = await startElFront({ anvilUrl: anvil.current.url, witnessWindowBlocks: 3, frames: chain });
    const to = '0x00000000000000000000000000000000000f2a41';
    const common = { to, value: 1n, gasLimit: 21_000, chainId: 8141 };
    for (const tx of [
      { ...common, nonce: 0, type: 0, gasPrice: 3_000_000_000n },
      { ...common, nonce: 1, type: 2, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 0n },
    ]) {
      hashes.push(await el('eth_sendRawTransaction', [await dev.signTransaction(tx)]));
    }
    await el('anvil_setBalance', [frameSender.address, '0xde0b6b3a7640000']);
    const raw = signed(
      {
        sender: frameSender.address.toLowerCase(),
        fees: [0n, 3_000_000_000n, 0n],
        signatures: [{ scheme: 1 }],
        frames: [
          { mode: 1, flags: 3, executionGas: 10_000n },
          { mode: 2, flags: 0, target: to, executionGas: 30_000n, value: 1n },
        ],
      },
      [(digest) => secp256k1Entry(frameSender.privateKey, digest)],
    );
    await el('anvil_mine', ['0x1']);
    expect(await chain.closeBlock([raw])).to.deep.equal([]);
    hashes.push(keccak256(raw));
  });
  after(async () => {
    await front?.close();
  });

  it("proves each transaction's record against the root its block carries, and the sidecar restores it byte for byte", async () => {
    for (const hash of hashes) {
      const found = await call<StrippedTransaction>(front.url, 'svc_getStrippedTransaction', [hash]);
      const block = await call<{ strippedTransactionsRoot: string; transactions: string[] }>(front.url, 'eth_getBlockByHash', [
        found.blockHash,
        false,
      ]);
      expect(block.strippedTransactionsRoot, hash).to.equal(found.strippedTransactionsRoot);
      // anvil's own transactions come first in the trie, in block order; the stand-in's frame transactions after them.
      const index = block.transactions.indexOf(hash);
      expect(Number(found.transactionIndex)).to.equal(index === -1 ? block.transactions.length : index);
      expect(keccak256(found.proof[0]!)).to.equal(found.strippedTransactionsRoot);
      const proven = await verifyMerkleProof(
        indexKey(Number(found.transactionIndex)),
        found.proof.map((node) => hexToBytes(node as `0x${string}`)),
      );
      expect(bytesToHex(proven!)).to.equal(found.strippedTransaction);
      const sidecar = await call<Sidecar>(front.url, 'svc_getSignatureSidecar', [found.blockNumber]);
      const witness = sidecar.transactions.find((t) => t.transactionHash === hash)!.witness;
      expect(restore({ record: found.strippedTransaction, witness })).to.equal(
        await call(front.url, 'eth_getRawTransactionByHash', [hash]),
      );
    }
  });

  it('keeps records below the witness window and answers null for the sidecar once pruned', async () => {
    const found = await call<StrippedTransaction>(front.url, 'svc_getStrippedTransaction', [hashes[0]]);
    await call(anvil.current.url, 'anvil_mine', ['0x5']);
    expect(await call(front.url, 'svc_getSignatureSidecar', [found.blockHash])).to.equal(null);
    expect(await call(front.url, 'svc_getStrippedTransaction', [hashes[0]])).to.deep.equal(found);
  });

  it('answers null for what it does not hold, and -32602 for malformed params', async () => {
    expect(await call(front.url, 'svc_getStrippedTransaction', [`0x${'11'.repeat(32)}`])).to.equal(null);
    expect(await call(front.url, 'svc_getSignatureSidecar', [`0x${'11'.repeat(32)}`])).to.equal(null);
    expect((await rpc(front.url, 'svc_getStrippedTransaction', ['0x12'], 3)).text).to.equal(
      '{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: params[0] must be a 32-byte transaction hash"}}',
    );
    expect((await rpc(front.url, 'svc_getSignatureSidecar', [{}], 4)).text).to.equal(
      '{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid params: params[0] must be a block hash, number or tag"}}',
    );
  });
});
