/**
 * What a validation-prefix verdict read from head state (frame-transactions.md section 8, last
 * paragraph; EIP-8141 "Revalidation"): the accounts (nonce, balance), the code and the sender's
 * slots. A refusal cached with them is replayed at a later head while every one of them still
 * reads the same there, and judged anew as soon as one changed: never longer.
 *
 * Plain strings, so that the same value crosses to a worker thread, the primary process and Redis.
 */
import { keccakHex, bytesOfHex } from './hex.js';
import type { Head, HeadState } from './state.js';

export interface StateDependencies {
  readonly accounts: ReadonlyArray<readonly [address: string, nonce: string, balance: string]>;
  /** keccak-256 of the code, `0x` for none. */
  readonly codes: ReadonlyArray<readonly [address: string, codeHash: string]>;
  readonly slots: ReadonlyArray<readonly [address: string, slot: string, word: string]>;
}

export const codeHashOf = (code: string): string => (code === '0x' ? '0x' : keccakHex(bytesOfHex(code)));

/** Whether every dependency reads the same at `head` (each read shared per head by HeadState). */
export async function stillHolds(deps: StateDependencies, state: HeadState, head: Head): Promise<boolean> {
  const checks = [
    ...deps.accounts.map(async ([address, nonce, balance]) => {
      const account = await state.account(address, head);
      return account.nonce.toString() === nonce && account.balance.toString() === balance;
    }),
    ...deps.codes.map(async ([address, hash]) => codeHashOf(await state.code(address, head)) === hash),
    ...deps.slots.map(async ([address, slot, word]) => (await state.storage(address, slot, head)) === word),
  ];
  return (await Promise.all(checks)).every(Boolean);
}
