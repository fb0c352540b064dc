/**
 * Head state as the gate reads it from the EL: the latest block (number, base fee, timestamp)
 * and accounts (nonce, balance) at that block. Reads are shared: one head read serves every
 * submission for `headCacheMs`, and an account is read once per head however many submissions
 * name it. A failed read throws `Unavailable`: the gate then fails closed.
 */
import { RpcFailure } from '../../src/errors.js';
import type { Answer } from '../../src/jsonrpc.js';
import { sharedFor } from '../../src/recent.js';
import type { Upstream } from '../../src/upstream.js';

export interface Head {
  readonly number: bigint;
  readonly baseFee: bigint;
  readonly timestamp: bigint;
}

export interface Account {
  readonly nonce: bigint;
  readonly balance: bigint;
}

/** The EL could not be read: not a verdict on the transaction. */
export class Unavailable extends Error {
  override name = 'Unavailable';
}

export class HeadState {
  /** The latest block, read at most once per `headCacheMs` whoever asks. */
  readonly latest: () => Promise<Head>;
  private accounts = new Map<string, Promise<Account>>();
  private accountsHead = -1n;

  constructor(
    private readonly execution: Upstream,
    headCacheMs: number,
  ) {
    this.latest = sharedFor(headCacheMs, () => this.readHead());
  }

  account(address: string, head: Head): Promise<Account> {
    if (head.number !== this.accountsHead) {
      this.accounts = new Map();
      this.accountsHead = head.number;
    }
    let account = this.accounts.get(address);
    if (account === undefined) {
      account = this.readAccount(address, head);
      this.accounts.set(address, account);
      account.catch(() => this.accounts.delete(address));
    }
    return account;
  }

  private async readHead(): Promise<Head> {
    const block = (await this.read('eth_getBlockByNumber', ['latest', false])) as Record<string, unknown> | null;
    if (block === null || typeof block.number !== 'string') throw new Unavailable('the EL returned no latest block');
    return {
      number: BigInt(block.number),
      baseFee: typeof block.baseFeePerGas === 'string' ? BigInt(block.baseFeePerGas) : 0n,
      timestamp: BigInt(block.timestamp as string),
    };
  }

  private async readAccount(address: string, head: Head): Promise<Account> {
    const at = '0x' + head.number.toString(16);
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
