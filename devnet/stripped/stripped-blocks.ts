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

/** Blocks kept computed; a block at the head is never kept (its frame transactions may still come). */
const BLOCKS_KEPT = 256;

export const indexKey = (index: number): Uint8Array => hexToBytes(encodeRlp(index === 0 ? '0x' : toBeHex(index)) as `0x${string}`);

export class StrippedBlocks {
  private readonly kept = new Map<string, StrippedBlock>();

  constructor(
    private readonly anvil: Rpc,
    private readonly frames: FrameChain | undefined,
  ) {}

  /** By block hash or number (0x quantity or tag); undefined for a block the EL does not have. */
  async block(id: string): Promise<StrippedBlock | undefined> {
    const cached = this.kept.get(id.toLowerCase());
    if (cached !== undefined) return cached;
    const byHash = id.length === 66;
    const header = (await this.anvil(byHash ? 'eth_getBlockByHash' : 'eth_getBlockByNumber', [id, false])) as { hash: string; number: string; transactions: string[] } | null;
    if (header === null) return undefined;
    const known = this.kept.get(header.hash);
    if (known !== undefined) return known;
    const raws: Array<{ hash: string; raw: string }> = [];
    for (const hash of header.transactions) raws.push({ hash, raw: (await this.anvil('eth_getRawTransactionByHash', [hash])) as string });
    for (const record of this.frames?.inBlock(header.hash) ?? []) raws.push({ hash: record.tx.hash, raw: record.raw });
    const transactions = raws.map(({ hash, raw }) => ({ hash, stripped: strip(raw) }));
    const trie: MerklePatriciaTrie = await createMPT();
    for (const [index, { stripped }] of transactions.entries()) await trie.put(indexKey(index), hexToBytes(stripped.record as `0x${string}`));
    const block: StrippedBlock = {
      hash: header.hash,
      number: BigInt(header.number),
      root: bytesToHex(trie.root()),
      transactions,
      proof: async (index) => (await createMerkleProof(trie, indexKey(index))).map((node) => bytesToHex(node)),
    };
    const head = BigInt((await this.anvil('eth_blockNumber')) as string);
    if (block.number < head) {
      if (this.kept.size >= BLOCKS_KEPT) this.kept.clear();
      this.kept.set(block.hash, block);
    }
    return block;
  }
}
