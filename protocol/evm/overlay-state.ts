/**
 * The EVM's view of the chain while frames run: one block's state, read on demand (account,
 * code, storage slot) through a `StateReader` (the gate's reads the EL at its head, cached per
 * head; the devnet's reads anvil), under the frames' own writes, kept in the checkpointed maps
 * of @ethereumjs/statemanager's SimpleStateManager and never sent anywhere by this class.
 *
 * Why not the package's RPCStateManager: its commit() folds only the account cache, so storage
 * written before a reverted checkpoint stays visible; and its reads (eth_getProof) bypass the
 * reader's cache and upstream pool.
 *
 * It also records what a verdict depends on: every account, code and sender slot read.
 * Code comes decoded and hashed once per address (CodeEntry), not on every access.
 */
import { SimpleStateManager } from '@ethereumjs/statemanager';
import { Account, bytesToHex, hexToBytes, unpadBytes, type Address } from '@ethereumjs/util';
import type { CodeEntry } from '../code-entry.js';
import type { StateDependencies } from '../refusal.js';
import { COMMON } from './fork.js';

/** Reads one block's state; addresses lower-case 0x, slots and words 32-byte 0x hex. */
export interface StateReader {
  account(address: string): Promise<{ readonly nonce: bigint; readonly balance: bigint }>;
  code(address: string): Promise<CodeEntry>;
  storage(address: string, slot: string): Promise<string>;
  /** Wraps each read the EVM waits on (the gate's compute budget leaves that time out). */
  waiting?<T>(read: Promise<T>): Promise<T>;
}

export interface StateWrites {
  readonly accounts: ReadonlyArray<readonly [string, Account | undefined]>;
  readonly codes: ReadonlyArray<readonly [string, Uint8Array]>;
  readonly storage: ReadonlyArray<readonly [string, string, Uint8Array]>;
}

/** Marks, in the storage overlay, an account whose stored slots were wiped (no fall-through to the EL). */
const CLEARED = '_cleared';

export class OverlayStateManager extends SimpleStateManager {
  /** Sender slots read (32-byte hex key → word), and code read per address: the verdict's dependencies. */
  readonly senderSlots = new Map<string, string>();
  readonly codes = new Map<string, CodeEntry>();
  readonly accounts = new Map<string, { nonce: bigint; balance: bigint }>();

  constructor(
    private readonly reader: StateReader,
    private readonly sender: string,
  ) {
    super({ common: COMMON });
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const key = address.toString();
    const top = this.topAccountStack();
    if (top.has(key)) return top.get(key);
    let account = this.accounts.get(key);
    let code = this.codes.get(key);
    if (account === undefined || code === undefined) {
      [account, code] = await this.waiting(Promise.all([this.reader.account(key), this.readCode(key)]));
      this.accounts.set(key, account);
    }
    const { nonce, balance } = account;
    const noCode = code.bytes.length === 0;
    if (nonce === 0n && balance === 0n && noCode) return undefined;
    // A fresh object: the EVM mutates what it is given before putAccount (never the code hash's bytes).
    return new Account(nonce, balance, undefined, noCode ? undefined : code.hash);
  }

  override async getCode(address: Address): Promise<Uint8Array> {
    const key = address.toString();
    const written = this.topCodeStack().get(key);
    if (written !== undefined) return written;
    const top = this.topAccountStack();
    if (top.has(key) && top.get(key) === undefined) return new Uint8Array(0);
    return (this.codes.get(key) ?? (await this.waiting(this.readCode(key)))).bytes;
  }

  override async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  override async getStorage(address: Address, slot: Uint8Array): Promise<Uint8Array> {
    const owner = address.toString();
    const key = bytesToHex(slot);
    const top = this.topStorageStack();
    const written = top.get(`${owner}_${key}`);
    if (written !== undefined) return written;
    if (top.has(owner + CLEARED)) return new Uint8Array(0);
    const padded = `0x${key.slice(2).padStart(64, '0')}`;
    const word = await this.waiting(this.reader.storage(owner, padded));
    if (owner === this.sender) this.senderSlots.set(padded, word);
    return unpadBytes(hexToBytes(word as `0x${string}`));
  }

  override async clearStorage(address: Address): Promise<void> {
    await super.clearStorage(address);
    this.topStorageStack().set(address.toString() + CLEARED, new Uint8Array(0));
  }

  override async deleteAccount(address: Address): Promise<void> {
    await super.deleteAccount(address);
    this.topCodeStack().set(address.toString(), new Uint8Array(0));
    await this.clearStorage(address);
  }

  /** Everything read so far, as a verdict's dependencies. */
  dependencies(): StateDependencies {
    return {
      accounts: [...this.accounts].map(([address, { nonce, balance }]) => [address, nonce.toString(), balance.toString()] as const),
      codes: [...this.codes].map(([address, code]) => [address, code.hashHex] as const),
      slots: [...this.senderSlots].map(([slot, word]) => [this.sender, slot, word] as const),
    };
  }

  /**
   * Everything written so far, committed or not: accounts (undefined: deleted), code, and
   * storage slots as 32-byte 0x keys. A wiped account's storage is not listed (EIP-6780 wipes
   * only accounts created in the same transaction, which had none before it).
   */
  writes(): StateWrites {
    const storage: Array<readonly [string, string, Uint8Array]> = [];
    for (const [key, value] of this.topStorageStack()) {
      if (key.endsWith(CLEARED)) continue;
      const [owner, slot] = key.split('_') as [string, string];
      storage.push([owner, `0x${slot.slice(2).padStart(64, '0')}`, value]);
    }
    return { accounts: [...this.topAccountStack()], codes: [...this.topCodeStack()], storage };
  }

  /** Addresses whose code the frames wrote (a deploy frame's CREATE*). */
  writtenCode(): string[] {
    return [...this.topCodeStack().keys()];
  }

  private waiting<T>(read: Promise<T>): Promise<T> {
    return this.reader.waiting === undefined ? read : this.reader.waiting(read);
  }

  private async readCode(address: string): Promise<CodeEntry> {
    const code = await this.reader.code(address);
    this.codes.set(address, code);
    return code;
  }
}
