/**
 * The devnet EL front's answers for the stripped store (spec 2.4, 2.5):
 *
 * - `svc_getStrippedTransaction [transactionHash]`: `{ transactionHash, blockHash, blockNumber,
 *   transactionIndex, strippedTransaction, strippedTransactionsRoot, proof }`, or null for a
 *   transaction not in a block. Records are kept for good, below the witness window too.
 * - `svc_getSignatureSidecar [blockHash | blockNumber]`: `{ blockHash, blockNumber, transactions:
 *   [{ transactionHash, witness }] }`, the block's elided bytes in transaction order; null for a
 *   block below the witness window (pruned) or one the EL does not have.
 * - `eth_getBlockByHash` / `eth_getBlockByNumber` carry `strippedTransactionsRoot`, and list the
 *   frame transactions the execution stand-in ran in the block after anvil's own
 *   (frames/frame-blocks.ts).
 */
import { withFrameTransactions } from '../frames/frame-blocks.js';
import type { FrameChain } from '../frames/frame-chain.js';
import type { Rpc } from '../rpc.js';
import type { BlockHeader, StrippedBlocks } from './stripped-blocks.js';

export class InvalidParams extends Error {}

const HASH = /^0x[0-9a-fA-F]{64}$/;
const hex = (value: bigint | number) => `0x${value.toString(16)}`;

export type Method = (params: unknown[]) => Promise<unknown>;

export function strippedMethods(
  anvil: Rpc,
  blocks: StrippedBlocks,
  frames: FrameChain | undefined,
  earliestFullBody: () => Promise<bigint>,
): Record<string, Method> {
  const transactionHash = (params: unknown[]) => {
    const hash = params[0];
    if (typeof hash !== 'string' || !HASH.test(hash)) throw new InvalidParams('params[0] must be a 32-byte transaction hash');
    return hash.toLowerCase();
  };
  const blockId = (params: unknown[]) => {
    const id = params[0];
    if (
      typeof id !== 'string' ||
      !(HASH.test(id) || /^0x[0-9a-fA-F]{1,16}$/.test(id) || ['latest', 'earliest', 'safe', 'finalized'].includes(id))
    ) {
      throw new InvalidParams('params[0] must be a block hash, number or tag');
    }
    return id;
  };
  const withStrippedRoot =
    (method: string): Method =>
    async (params) => {
      const block = (await anvil(method, params)) as (BlockHeader & Record<string, unknown>) | null;
      if (block === null) return block;
      const listed = frames === undefined ? block : withFrameTransactions(block, frames.inBlock(block.hash), params[1] === true);
      return { ...listed, strippedTransactionsRoot: (await blocks.of(block)).root };
    };

  return {
    svc_getStrippedTransaction: async (params) => {
      const hash = transactionHash(params);
      const frame = frames?.record(hash);
      const placed =
        frame !== undefined
          ? { blockHash: frame.blockHash, index: frame.index }
          : await anvil('eth_getTransactionByHash', [hash]).then((tx: { blockHash: string | null; transactionIndex: string } | null) =>
              tx?.blockHash ? { blockHash: tx.blockHash, index: Number(tx.transactionIndex) } : undefined,
            );
      if (placed === undefined) return null;
      const block = await blocks.block(placed.blockHash);
      if (block === undefined) return null;
      return {
        transactionHash: hash,
        blockHash: block.hash,
        blockNumber: hex(block.number),
        transactionIndex: hex(placed.index),
        strippedTransaction: block.transactions[placed.index]!.stripped.record,
        strippedTransactionsRoot: block.root,
        proof: await block.proof(placed.index),
      };
    },
    svc_getSignatureSidecar: async (params) => {
      const block = await blocks.block(blockId(params));
      if (block === undefined || block.number < (await earliestFullBody())) return null;
      return {
        blockHash: block.hash,
        blockNumber: hex(block.number),
        transactions: block.transactions.map(({ hash, stripped }) => ({ transactionHash: hash, witness: stripped.witness })),
      };
    },
    eth_getBlockByHash: withStrippedRoot('eth_getBlockByHash'),
    eth_getBlockByNumber: withStrippedRoot('eth_getBlockByNumber'),
  };
}
