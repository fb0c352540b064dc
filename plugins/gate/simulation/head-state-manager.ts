/**
 * The EVM's view of the chain while a validation prefix runs: the EL's state at one head, read
 * on demand (account, code, storage slot) through the gate's `HeadState`, which caches each
 * read for that head; and the prefix's own writes (a deploy frame's) in the checkpointed maps
 * of @ethereumjs/statemanager's SimpleStateManager, never sent anywhere.
 *
 * Why not the package's RPCStateManager: its commit() folds only the account cache, so storage
 * written before a reverted checkpoint stays visible; and its reads (eth_getProof) bypass the
 * gate's per-head cache and upstream pool.
 *
 * It also records what the verdict depends on: every account, code and sender slot read; and,
 * for the simulation's compute budget (budget.ts), the time spent waiting for those reads.
 * Code is decoded and hashed once per address per head (HeadState.codeEntry), not on every access.
 */
import { SimpleStateManager } from '@ethereumjs/statemanager';
import { Account, bytesToHex, hexToBytes, unpadBytes, type Address } from '@ethereumjs/util';
import type { CodeEntry } from '../../../protocol/index.js';
import type { StateDependencies } from '../dependencies.js';
import type { Head, HeadState } from '../state.js';
import type { ComputeBudget } from './budget.js';
import { COMMON } from '../../../protocol/evm/index.js';

export interface StateWrites {
  readonly accounts: ReadonlyArray<readonly [string, Account | undefined]>;
  readonly codes: ReadonlyArray<readonly [string, Uint8Array]>;
  readonly storage: ReadonlyArray<readonly [string, string, Uint8Array]>;
}

/** Marks, in the storage overlay, an account whose stored slots were wiped (no fall-through to the EL). */
const CLEARED = '_cleared';

export class HeadStateManager extends SimpleStateManager {
  /** Sender slots read (32-byte hex key → word), and code read per address: the verdict's dependencies. */
  readonly senderSlots = new Map<string, string>();
  readonly codes = new Map<string, CodeEntry>();
  readonly accounts = new Map<string, { nonce: bigint; balance: bigint }>();

  constructor(
    private readonly state: HeadState,
    private readonly head: Head,
    private readonly sender: string,
    private readonly budget?: ComputeBudget,
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
      [account, code] = await this.waiting(Promise.all([this.state.account(key, this.head), this.headCode(key)]));
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
    return (this.codes.get(key) ?? (await this.waiting(this.headCode(key)))).bytes;
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
    const word = await this.waiting(this.state.storage(owner, padded, this.head));
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

  /** Everything read from the head so far, as a verdict's dependencies. */
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
   * only accounts created in the same transaction, which had none at the head).
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

  /** Slots of `owner` written non-zero that were zero at the head (new storage, EIP-8037). */
  newSlotsOf(owner: string): number {
    let count = 0;
    for (const [address, slot, value] of this.writes().storage) {
      if (address !== owner || value.every((byte) => byte === 0)) continue;
      const original = this.senderSlots.get(slot);
      if (original === undefined || BigInt(original) === 0n) count++;
    }
    return count;
  }

  /** Addresses whose code the prefix wrote (a deploy frame's CREATE*). */
  writtenCode(): string[] {
    return [...this.topCodeStack().keys()];
  }

  private waiting<T>(read: Promise<T>): Promise<T> {
    return this.budget === undefined ? read : this.budget.waiting(read);
  }

  private async headCode(address: string): Promise<CodeEntry> {
    const code = await this.state.codeEntry(address, this.head);
    this.codes.set(address, code);
    return code;
  }
}
