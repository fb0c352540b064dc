/**
 * Head state as the gate reads it from the EL: the latest block (number, base fee, timestamp)
 * and, at that block, accounts (nonce, balance), code and storage slots. Reads are shared: one
 * head read serves every submission for `headCacheMs`, and each account, code or slot is read
 * once per head however many submissions name it (an older head, still being judged when a
 * newer one arrived, reads without the cache). A failed read throws `Unavailable`: the gate then fails closed.
 */
import { RpcFailure, sharedFor, type Answer, type Upstream } from '../../../src/plugin.js';
import { type CodeEntry, decodeCode } from '../../../protocol/index.js';
import type { ExecutionBlock } from '../../../protocol/evm/index.js';
import { Unavailable } from '../errors.js';

export interface Head {
  readonly number: bigint;
  readonly baseFee: bigint;
  readonly timestamp: bigint;
  /** Lower-case 0x address of the block's beneficiary (warm in every transaction, EIP-3651). */
  readonly coinbase: string;
}

export interface Account {
  readonly nonce: bigint;
  readonly balance: bigint;
}

export class HeadState {
  /** The latest block, read at most once per `headCacheMs` whoever asks. */
  readonly latest: () => Promise<Head>;
  /** The latest block read now (concurrent callers share one read), to confirm a state-bound refusal. */
  readonly fresh: () => Promise<Head>;
  /** Reads at the current head, by kind and address: each is made once per head. */
  private reads = new Map<string, Promise<unknown>>();
  private readsHead = -1n;
  /** The newest head `fresh()` found: `latest()` never answers an older one after it. */
  private newest: Head | undefined;

  constructor(
    private readonly execution: Upstream,
    headCacheMs: number,
  ) {
    const cached = sharedFor(headCacheMs, () => this.readHead());
    // Otherwise every submission judged at the cached head after a confirming refusal reads
    // state uncached (reads are cached for the newest head only) until the cache expires.
    this.latest = () => cached().then((head) => (this.newest !== undefined && this.newest.number > head.number ? this.newest : head));
    let reading: Promise<Head> | undefined;
    this.fresh = () => {
      reading ??= this.readHead()
        .then((head) => {
          if (this.newest === undefined || head.number > this.newest.number) this.newest = head;
          return head;
        })
        .finally(() => {
          reading = undefined;
        });
      return reading;
    };
  }

  account(address: string, head: Head): Promise<Account> {
    return this.once(`account:${address}`, head, () => this.readAccount(address, head));
  }

  /** The account's code as 0x hex (`0x` for none) at `head`. */
  code(address: string, head: Head): Promise<string> {
    return this.once(`code:${address}`, head, async () => {
      const code = await this.read('eth_getCode', [address, blockTag(head)]);
      if (typeof code !== 'string') throw new Unavailable('the EL returned no code');
      return code.toLowerCase();
    });
  }

  /** The account's code at `head`, decoded and hashed once for the head (code-entry.ts). */
  codeEntry(address: string, head: Head): Promise<CodeEntry> {
    return this.once(`code-entry:${address}`, head, async () => decodeCode(await this.code(address, head)));
  }

  /** A storage slot (32-byte 0x hex key) of the account at `head`, as a 32-byte 0x hex word. */
  storage(address: string, slot: string, head: Head): Promise<string> {
    return this.once(`storage:${address}:${slot}`, head, async () => {
      const word = await this.read('eth_getStorageAt', [address, slot, blockTag(head)]);
      if (typeof word !== 'string') throw new Unavailable('the EL returned no storage word');
      return word.toLowerCase();
    });
  }

  private once<T>(key: string, head: Head, load: () => Promise<T>): Promise<T> {
    if (head.number !== this.readsHead) {
      if (head.number < this.readsHead) return load();
      this.reads = new Map();
      this.readsHead = head.number;
    }
    let value = this.reads.get(key) as Promise<T> | undefined;
    if (value === undefined) {
      // Keys are attacker-chosen (senders, targets, slots) and an idle chain keeps one head for
      // minutes: past this many reads the cache starts again rather than grow.
      if (this.reads.size >= MAX_READS_PER_HEAD) this.reads = new Map();
      value = load();
      this.reads.set(key, value);
      value.catch(() => this.reads.delete(key));
    }
    return value;
  }

  private async readHead(): Promise<Head> {
    return (await this.block('latest')).head;
  }

  /**
   * A block by tag, number (0x quantity) or hash, as a head (its state is read at its number) and
   * as the block a transaction executes in; null when the EL has no such block.
   */
  async block(at: string): Promise<{ head: Head; execution: ExecutionBlock }>;
  async block(at: string, orNull: true): Promise<{ head: Head; execution: ExecutionBlock } | null>;
  async block(at: string, orNull = false): Promise<{ head: Head; execution: ExecutionBlock } | null> {
    const byHash = /^0x[0-9a-fA-F]{64}$/.test(at);
    const block = (await this.read(byHash ? 'eth_getBlockByHash' : 'eth_getBlockByNumber', [at, false])) as Record<string, unknown> | null;
    if (block === null && orNull) return null;
    if (block === null || typeof block.number !== 'string')
      throw new Unavailable(at === 'latest' ? 'the EL returned no latest block' : `the EL returned no block ${at}`);
    const head: Head = {
      number: BigInt(block.number),
      baseFee: typeof block.baseFeePerGas === 'string' ? BigInt(block.baseFeePerGas) : 0n,
      timestamp: BigInt(block.timestamp as string),
      coinbase: typeof block.miner === 'string' ? block.miner.toLowerCase() : '0x0000000000000000000000000000000000000000',
    };
    const execution: ExecutionBlock = {
      ...head,
      gasLimit: typeof block.gasLimit === 'string' ? BigInt(block.gasLimit) : 0n,
      prevRandao: typeof block.mixHash === 'string' ? block.mixHash : `0x${'00'.repeat(32)}`,
    };
    return { head, execution };
  }

  private async readAccount(address: string, head: Head): Promise<Account> {
    const at = blockTag(head);
    const [nonce, balance] = await Promise.all([
      this.read('eth_getTransactionCount', [address, at]),
      this.read('eth_getBalance', [address, at]),
    ]);
    if (typeof nonce !== 'string' || typeof balance !== 'string') throw new Unavailable('the EL returned no account state');
    return { nonce: BigInt(nonce), balance: BigInt(balance) };
  }

  private async read(method: string, params: unknown[]): Promise<unknown> {
    let answer: Answer;
    try {
      answer = await this.execution.call(method, params);
    } catch (err) {
      if (err instanceof RpcFailure) throw new Unavailable(`${method}: ${err.message}`, { cause: err });
      throw err;
    }
    if ('error' in answer) throw new Unavailable(`${method}: ${answer.error.message}`);
    return answer.result;
  }
}

const blockTag = (head: Head) => `0x${head.number.toString(16)}`;
const MAX_READS_PER_HEAD = 100_000;
