/**
 * The block-wide reads that anvil answers without the frame transactions it never saw:
 * `eth_getBlockReceipts` gets their receipts appended (they are each block's last
 * transactions), and `eth_getLogs` their logs that match the filter, in log-index order. An
 * indexer following either sees frame transactions' events as it sees any others.
 */
import type { Rpc } from '../rpc.js';
import type { FrameChain, FrameRecord } from './frame-chain.js';
import { frameReceiptRpc } from './rpc-shapes.js';

interface Log {
  readonly address: string;
  readonly topics: readonly string[];
  readonly blockNumber: string;
  readonly logIndex: string;
}

interface LogFilter {
  readonly fromBlock?: string;
  readonly toBlock?: string;
  readonly blockHash?: string;
  readonly address?: string | readonly string[] | null;
  readonly topics?: ReadonlyArray<string | readonly string[] | null>;
}

export function frameAwareReads(anvil: Rpc, frames: FrameChain): Record<string, (params: unknown[]) => Promise<unknown>> {
  const receiptsOf = (records: readonly FrameRecord[]) => records.map((record) => frameReceiptRpc(record) as { logs: Log[] });
  const blockNumber = async (tag: string | undefined): Promise<bigint> => {
    if (tag === 'earliest') return 0n;
    if (tag?.startsWith('0x')) return BigInt(tag);
    return BigInt((await anvil('eth_blockNumber', [])) as string);
  };

  return {
    async eth_getBlockReceipts(params) {
      const receipts = (await anvil('eth_getBlockReceipts', params)) as unknown[] | null;
      if (receipts === null) return null;
      const block = params[0];
      const byHash = typeof block === 'string' && block.length === 66;
      const { hash } = (await anvil(byHash ? 'eth_getBlockByHash' : 'eth_getBlockByNumber', [block, false])) as { hash: string };
      return [...receipts, ...receiptsOf(frames.inBlock(hash))];
    },

    async eth_getLogs(params) {
      const logs = (await anvil('eth_getLogs', params)) as Log[];
      const filter = (params[0] ?? {}) as LogFilter;
      const records =
        filter.blockHash !== undefined
          ? frames.inBlock(filter.blockHash)
          : frames.between(await blockNumber(filter.fromBlock), await blockNumber(filter.toBlock));
      const ours = receiptsOf(records).flatMap((receipt) => receipt.logs.filter((log) => matches(log, filter)));
      if (ours.length === 0) return logs;
      const position = (log: Log) => [BigInt(log.blockNumber), BigInt(log.logIndex)] as const;
      return [...logs, ...ours].sort((a, b) => {
        const [blockA, indexA] = position(a);
        const [blockB, indexB] = position(b);
        return blockA !== blockB ? (blockA < blockB ? -1 : 1) : indexA < indexB ? -1 : indexA > indexB ? 1 : 0;
      });
    },
  };
}

/** The filter's address and topic rules (execution-apis: null or [] matches anything at a position). */
function matches(log: Log, { address, topics = [] }: LogFilter): boolean {
  const addresses = address === undefined || address === null ? [] : typeof address === 'string' ? [address] : address;
  if (addresses.length > 0 && !addresses.some((a) => a.toLowerCase() === log.address.toLowerCase())) return false;
  return topics.every((wanted, i) => {
    if (wanted === null || (Array.isArray(wanted) && wanted.length === 0)) return true;
    const topic = log.topics[i]?.toLowerCase();
    return (typeof wanted === 'string' ? [wanted] : wanted).some((t) => t.toLowerCase() === topic);
  });
}
