/**
 * What a validation-prefix verdict read from head state (frame-transactions.md section 8, last
 * paragraph; EIP-8141 "Revalidation"): the accounts (nonce, balance), the code and the sender's
 * slots. A refusal cached with them is replayed at a later head while every one of them still
 * reads the same there, and judged anew as soon as one changed: never longer.
 *
 * A simulation hands over everything it read (`StateDependencies`); the verdict cache keeps
 * less (`DependencyDigest`): the keys to read again and one keccak-256 digest of the values, so
 * that a refusal that read 47 slots holds ~1.5 KB, not ~31 KB. When even the keys would pass
 * `DEPENDENCY_KEYS_MAX_CHARS` it keeps none, and the refusal holds only at the head it was
 * judged at (conservative: judged anew sooner, never replayed wrongly).
 *
 * Plain strings, so that the same value crosses to a worker thread, the primary process and Redis.
 */
import { keccakHex, type StateDependencies } from '../../../protocol/index.js';
import type { Head, HeadState } from './state.js';

export type { StateDependencies };

/**
 * What a cached refusal keeps: the keys, and the digest of the values they read (`valuesDigest`).
 * Each list is one comma-separated string: one heap object, where 47 slot strings took ~2.4 KB.
 */
export interface DependencyDigest {
  /** Addresses whose nonce and balance were read. */
  readonly accounts: string;
  /** Addresses whose code was read. */
  readonly codes: string;
  /** Per owner, its slots as 0x hex without leading zeros. */
  readonly slots: ReadonlyArray<readonly [address: string, slots: string]>;
  readonly digest: string;
}

/** Either form: a cache written by an older instance (Redis) may still hold the full one. */
export type CachedDependencies = StateDependencies | DependencyDigest;

/** The keys a cached refusal may keep, as JSON characters: with its words, a refusal stays under 2 KB. */
export const DEPENDENCY_KEYS_MAX_CHARS = 1_600;

const list = (joined: string) => (joined === '' ? [] : joined.split(','));
const shortSlot = (slot: string) => `0x${slot.slice(2).replace(/^0+/, '') || '0'}`;
const fullSlot = (slot: string) => `0x${slot.slice(2).padStart(64, '0')}`;

/** The canonical serialisation of the values, in the order of the keys, hashed. */
const valuesDigest = (accounts: ReadonlyArray<readonly [string, string]>, codes: readonly string[], words: readonly string[]) =>
  keccakHex(Buffer.from(JSON.stringify([accounts, codes, words])));

/** The digest form of `deps` (itself if it is one), or undefined when its keys alone pass the bound. */
export function compactDependencies(deps: CachedDependencies): DependencyDigest | undefined {
  if ('digest' in deps) return deps;
  const owners = new Map<string, Array<readonly [slot: string, word: string]>>();
  for (const [address, slot, word] of deps.slots) {
    const read = owners.get(address) ?? [];
    read.push([shortSlot(slot), word]);
    owners.set(address, read);
  }
  const keys = {
    accounts: deps.accounts.map(([address]) => address).join(','),
    codes: deps.codes.map(([address]) => address).join(','),
    slots: [...owners].map(([address, read]) => [address, read.map(([slot]) => slot).join(',')] as const),
  };
  if (JSON.stringify(keys).length > DEPENDENCY_KEYS_MAX_CHARS) return undefined;
  const words = [...owners.values()].flatMap((read) => read.map(([, word]) => word));
  return {
    ...keys,
    digest: valuesDigest(
      deps.accounts.map(([, nonce, balance]) => [nonce, balance] as const),
      deps.codes.map(([, hash]) => hash),
      words,
    ),
  };
}

/** Whether every dependency reads the same at `head` (each read shared per head by HeadState). */
export async function stillHolds(deps: CachedDependencies, state: HeadState, head: Head): Promise<boolean> {
  if ('digest' in deps) {
    const [accounts, codes, words] = await Promise.all([
      Promise.all(list(deps.accounts).map(async (address) => state.account(address, head))),
      Promise.all(list(deps.codes).map(async (address) => (await state.codeEntry(address, head)).hashHex)),
      Promise.all(deps.slots.flatMap(([address, slots]) => list(slots).map((slot) => state.storage(address, fullSlot(slot), head)))),
    ]);
    const read = accounts.map(({ nonce, balance }) => [nonce.toString(), balance.toString()] as const);
    return valuesDigest(read, codes, words) === deps.digest;
  }
  const checks = [
    ...deps.accounts.map(async ([address, nonce, balance]) => {
      const account = await state.account(address, head);
      return account.nonce.toString() === nonce && account.balance.toString() === balance;
    }),
    ...deps.codes.map(async ([address, hash]) => (await state.codeEntry(address, head)).hashHex === hash),
    ...deps.slots.map(async ([address, slot, word]) => (await state.storage(address, slot, head)) === word),
  ];
  return (await Promise.all(checks)).every(Boolean);
}
