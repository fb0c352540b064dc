/**
 * The devnet's stripped store (spec 2.4): each block's signature-stripped records (strip.ts)
 * under a root, `strippedTransactionsRoot`, defined here as `transactionsRoot` is: the root of
 * the ordered Merkle-Patricia trie (@ethereumjs/mpt) mapping rlp(transaction index) to the
 * record, over the block's own transactions in order, then the frame transactions the
 * execution stand-in ran in it. An inclusion proof is the EIP-1186 list of trie nodes from the
 * root to the record's leaf: keccak-256 of the first node is the root.
 */
import { createMerkleProof, createMPT, type MerklePatriciaTrie } from '@ethereumjs/mpt';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { encodeRlp, toBeHex } from 'ethers';
import type { FrameChain } from '../frames/frame-chain.js';
import type { Rpc } from '../rpc.js';
import { strip, type Stripped } from './strip.js';

export interface StrippedBlock {
  readonly hash: string;
  readonly number: bigint;
  readonly root: string;
  readonly transactions: ReadonlyArray<{ readonly hash: string; readonly stripped: Stripped }>;
  proof(index: number): Promise<string[]>;
}

/** Blocks kept computed, each with the number of frame transactions it had then. */
const BLOCKS_KEPT = 256;

export const indexKey = (index: number): Uint8Array => hexToBytes(encodeRlp(index === 0 ? '0x' : toBeHex(index)) as `0x${string}`);

/** A block object as the EL answers it, with transaction hashes or objects. */
export interface BlockHeader {
  readonly hash: string;
  readonly number: string;
  readonly transactions: ReadonlyArray<string | { readonly hash: string }>;
}

export class StrippedBlocks {
  private readonly kept = new Map<string, { readonly block: StrippedBlock; readonly frames: number }>();

  constructor(
    private readonly anvil: Rpc,
    private readonly frames: FrameChain | undefined,
  ) {}

  /** By block hash or number (0x quantity or tag); undefined for a block the EL does not have. */
  async block(id: string): Promise<StrippedBlock | undefined> {
    const kept = this.fresh(id.toLowerCase());
    if (kept !== undefined) return kept;
    const header = (await this.anvil(id.length === 66 ? 'eth_getBlockByHash' : 'eth_getBlockByNumber', [id, false])) as BlockHeader | null;
    return header === null ? undefined : this.of(header);
  }

  /** The stripped block of a block object the caller already read. */
  async of(header: BlockHeader): Promise<StrippedBlock> {
    const hash = header.hash.toLowerCase();
    const kept = this.fresh(hash);
    if (kept !== undefined) return kept;
    const framed = this.frames?.inBlock(hash) ?? [];
    const raws: Array<{ hash: string; raw: string }> = [];
    for (const tx of header.transactions) {
      const txHash = typeof tx === 'string' ? tx : tx.hash;
      raws.push({ hash: txHash, raw: (await this.anvil('eth_getRawTransactionByHash', [txHash])) as string });
    }
    for (const record of framed) raws.push({ hash: record.tx.hash, raw: record.raw });
    const transactions = raws.map(({ hash: txHash, raw }) => ({ hash: txHash, stripped: strip(raw) }));
    const trie: MerklePatriciaTrie = await createMPT();
    for (const [index, { stripped }] of transactions.entries())
      await trie.put(indexKey(index), hexToBytes(stripped.record as `0x${string}`));
    const block: StrippedBlock = {
      hash,
      number: BigInt(header.number),
      root: bytesToHex(trie.root()),
      transactions,
      proof: async (index) => (await createMerkleProof(trie, indexKey(index))).map((node) => bytesToHex(node)),
    };
    if (this.kept.size >= BLOCKS_KEPT) this.kept.clear();
    this.kept.set(hash, { block, frames: framed.length });
    return block;
  }

  /** A kept block, unless the execution stand-in has added frame transactions to it since (it does just after a block closes). */
  private fresh(hash: string): StrippedBlock | undefined {
    const kept = this.kept.get(hash);
    return kept !== undefined && kept.frames === (this.frames?.inBlock(hash).length ?? 0) ? kept.block : undefined;
  }
}
