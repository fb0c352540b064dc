/**
 * Blocks as the chain's EL shows them, with the frame transactions anvil never saw: each block
 * lists them after its own transactions (their hashes, or their objects for a full block), its
 * transaction counts include them, and they are found by block and index (and raw). An indexer
 * or explorer walking blocks sees every frame transaction.
 */
import type { Rpc } from '../rpc.js';
import type { FrameChain, FrameRecord } from './frame-chain.js';
import { frameTransactionRpc } from './rpc-shapes.js';

const hex = (value: bigint | number) => `0x${value.toString(16)}`;

interface Listed {
  readonly hash: string;
  readonly transactions: readonly unknown[];
}

/** `block` (anvil's) with `records` appended to its transactions, as objects if `full`. */
export function withFrameTransactions<T extends Listed>(block: T, records: readonly FrameRecord[], full: boolean): T {
  if (records.length === 0) return block;
  return { ...block, transactions: [...block.transactions, ...records.map((r) => (full ? frameTransactionRpc(r) : r.tx.hash))] };
}

export function frameBlockReads(anvil: Rpc, frames: FrameChain): Record<string, (params: unknown[]) => Promise<unknown>> {
  /** anvil's block (hashes only), by hash or by number or tag. */
  const blockOf = (id: unknown, byHash: boolean) =>
    anvil(byHash ? 'eth_getBlockByHash' : 'eth_getBlockByNumber', [id, false]) as Promise<Listed | null>;
  const count =
    (byHash: boolean) =>
    async (params: unknown[]): Promise<unknown> => {
      const block = await blockOf(params[0], byHash);
      return block === null ? null : hex(block.transactions.length + frames.inBlock(block.hash).length);
    };
  const atIndex =
    (byHash: boolean, raw: boolean) =>
    async (params: unknown[]): Promise<unknown> => {
      const method = `eth_get${raw ? 'Raw' : ''}TransactionByBlock${byHash ? 'Hash' : 'Number'}AndIndex`;
      const block = await blockOf(params[0], byHash);
      const index = typeof params[1] === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(params[1]) ? Number(BigInt(params[1])) : undefined;
      // anvil's own transactions, and any refusal of the params, as anvil answers them.
      if (block === null || index === undefined || index < block.transactions.length) return anvil(method, params);
      const record = frames.inBlock(block.hash)[index - block.transactions.length];
      if (record === undefined) return null;
      return raw ? record.raw : frameTransactionRpc(record);
    };
  return {
    eth_getBlockTransactionCountByHash: count(true),
    eth_getBlockTransactionCountByNumber: count(false),
    eth_getTransactionByBlockHashAndIndex: atIndex(true, false),
    eth_getTransactionByBlockNumberAndIndex: atIndex(false, false),
    eth_getRawTransactionByBlockHashAndIndex: atIndex(true, true),
    eth_getRawTransactionByBlockNumberAndIndex: atIndex(false, true),
  };
}
