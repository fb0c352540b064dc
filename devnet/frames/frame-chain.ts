/**
 * The devnet's execution stand-in for type 0x06, a development stand-in as the node stand-in
 * is: anvil cannot execute frame transactions, so when the node stand-in closes an EL block,
 * the frame transactions ordered for it run here in full (execute.ts), in order, over anvil's
 * state after that block's own transactions. What they wrote is set on anvil (`anvil_setBalance`,
 * `anvil_setNonce`, `anvil_setCode`, `anvil_setStorageAt`) and their receipts are kept here, as
 * the block's last transactions, for the devnet's EL front to answer.
 */
import { bytesToHex } from '@ethereumjs/util';
import { keccak256 } from 'ethers';
import { decodeFrameTransaction, type FrameTransaction } from '../../protocol/index.js';
import {
  type ExecutedFrameTransaction,
  executeFrameTransaction,
  InvalidFrameTransaction,
  OverlayStateManager,
  type SkipReason,
} from '../../protocol/evm/index.js';
import { rpcClient, type Rpc } from '../rpc.js';
import { blockReader } from './block-reader.js';

/** An executed frame transaction where the chain put it. */
export interface FrameRecord {
  readonly raw: string;
  readonly tx: FrameTransaction;
  readonly blockHash: string;
  readonly blockNumber: bigint;
  readonly index: number;
  readonly cumulativeGasUsed: bigint;
  /** Block-wide index of its first log. */
  readonly firstLogIndex: number;
  readonly executed: ExecutedFrameTransaction;
}

export interface Skipped {
  readonly hash: string;
  readonly reason: SkipReason;
  readonly why: string;
}

/** Receipts kept; the oldest go first past this. */
const RECORDS_KEPT = 100_000;
const HEX = (value: bigint) => `0x${value.toString(16)}`;

interface Block {
  number: string;
  hash: string;
  baseFeePerGas?: string;
  timestamp: string;
  miner: string;
  gasLimit: string;
  gasUsed: string;
  mixHash?: string;
  transactions: string[];
}

export class FrameChain {
  private readonly records = new Map<string, FrameRecord>();
  /** The block close under way, if any (settled whatever its outcome). */
  private closing: Promise<unknown> = Promise.resolve();
  private readonly byBlock = new Map<string, FrameRecord[]>();
  private readonly anvil: Rpc;

  constructor(anvilUrl: string) {
    this.anvil = rpcClient(anvilUrl);
  }

  /** Runs `raws` (in order) as the last transactions of anvil's latest block; returns what was left out. */
  async closeBlock(raws: readonly string[]): Promise<Skipped[]> {
    if (raws.length === 0) return [];
    const block = (await this.anvil('eth_getBlockByNumber', ['latest', false])) as Block;
    const head = {
      number: BigInt(block.number),
      timestamp: BigInt(block.timestamp),
      baseFee: BigInt(block.baseFeePerGas ?? 0),
      coinbase: block.miner.toLowerCase(),
    };
    const receipts = (await this.anvil('eth_getBlockReceipts', [block.number])) as Array<{ logs: unknown[] }>;
    let logIndex = receipts.reduce((sum, receipt) => sum + receipt.logs.length, 0);
    let cumulative = BigInt(block.gasUsed);
    let index = block.transactions.length;
    const state = new OverlayStateManager(blockReader(this.anvil, head.number), '');
    const skipped: Skipped[] = [];
    const included: FrameRecord[] = [];
    for (const raw of raws) {
      let tx: FrameTransaction;
      try {
        tx = decodeFrameTransaction(raw);
      } catch (err) {
        skipped.push({ hash: keccak256(raw), reason: 'other', why: err instanceof Error ? err.message : String(err) });
        continue;
      }
      await state.checkpoint();
      try {
        const executed = await executeFrameTransaction(
          tx,
          { ...head, gasLimit: BigInt(block.gasLimit), prevRandao: block.mixHash ?? HEX(0n).padEnd(66, '0') },
          state,
        );
        await state.commit();
        cumulative += executed.gasUsed;
        const record = {
          raw,
          tx,
          blockHash: block.hash,
          blockNumber: head.number,
          index: index++,
          cumulativeGasUsed: cumulative,
          firstLogIndex: logIndex,
          executed,
        };
        logIndex += executed.frames.reduce((sum, frame) => sum + frame.logs.length, 0);
        included.push(record);
      } catch (err) {
        await state.revert();
        if (!(err instanceof InvalidFrameTransaction)) throw err;
        skipped.push({ hash: tx.hash, reason: err.reason, why: err.message });
      }
    }
    await this.apply(state);
    for (const record of included) this.keep(record);
    return skipped;
  }

  /**
   * Runs `close` (mining a block, then running its frame transactions here) as one step for
   * readers: until it ends, `settled()` waits, so the EL front never shows the block without
   * its frame transactions (a sync submission would look for its receipt at that head, find
   * none, and on an idle devnet never see another head).
   */
  whileClosing<T>(close: () => Promise<T>): Promise<T> {
    const run = close();
    this.closing = run.catch(() => undefined);
    return run;
  }

  /** Resolves once no block close is under way. */
  settled(): Promise<unknown> {
    return this.closing;
  }

  record(hash: string): FrameRecord | undefined {
    return this.records.get(hash.toLowerCase());
  }

  /** The frame transactions executed in a block, by its hash. */
  inBlock(blockHash: string): readonly FrameRecord[] {
    return this.byBlock.get(blockHash.toLowerCase()) ?? [];
  }

  /** The frame transactions executed in blocks `from` to `to`, in chain order. */
  between(from: bigint, to: bigint): FrameRecord[] {
    return [...this.records.values()].filter((record) => record.blockNumber >= from && record.blockNumber <= to);
  }

  private async apply(state: OverlayStateManager): Promise<void> {
    const { accounts, codes, storage } = state.writes();
    for (const [address, account] of accounts) {
      await this.anvil('anvil_setBalance', [address, HEX(account?.balance ?? 0n)]);
      await this.anvil('anvil_setNonce', [address, HEX(account?.nonce ?? 0n)]);
      if (account === undefined) await this.anvil('anvil_setCode', [address, '0x']);
    }
    for (const [address, code] of codes) await this.anvil('anvil_setCode', [address, bytesToHex(code)]);
    for (const [address, slot, value] of storage) {
      await this.anvil('anvil_setStorageAt', [address, slot, `0x${Buffer.from(value).toString('hex').padStart(64, '0')}`]);
    }
  }

  private keep(record: FrameRecord): void {
    this.records.set(record.tx.hash, record);
    const block = this.byBlock.get(record.blockHash) ?? [];
    block.push(record);
    this.byBlock.set(record.blockHash, block);
    if (this.records.size <= RECORDS_KEPT) return;
    const [oldest] = this.records.values();
    this.records.delete(oldest!.tx.hash);
    const rest = this.byBlock.get(oldest!.blockHash)?.filter((r) => r !== oldest) ?? [];
    if (rest.length === 0) this.byBlock.delete(oldest!.blockHash);
    else this.byBlock.set(oldest!.blockHash, rest);
  }
}
