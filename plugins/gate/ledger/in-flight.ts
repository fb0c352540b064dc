/**
 * Admitted transactions not yet executed, per sender (spec 4.4 in-flight caps) and the balance
 * they reserve per payer: "pending" until seen executed or skipped. An entry stops counting as
 * soon as the head shows it done:
 * - executed: the sender's state nonce has passed it;
 * - skipped (ordered, then dropped by the EL): `skipAfterBlocks` heads went by without that,
 *   counted from the head read once the submission target acknowledged it (ordered: the next
 *   block consensus closes holds it or skipped it), not from the possibly older head it was
 *   judged at;
 * so the cap can never leak slots. A sender's entries are pruned when it submits again, a payer's
 * when its reservation is asked at a head, plus a bounded sweep of stale entries so that
 * abandoned senders do not hold memory. A payer knows no sender's state nonce: an executed entry
 * whose sender never returns counts against its payer until `skipAfterBlocks` heads went by.
 */
export interface InFlightEntry {
  readonly hash: string;
  readonly nonce: bigint;
  readonly payer: string;
  readonly cost: bigint;
  readonly head: bigint;
  /** Type 0x04: the accounts its EIP-7702 authorizations delegate (they count as having code while it is pending). */
  readonly authorities?: readonly string[];
}

interface Held {
  readonly sender: string;
  readonly entry: InFlightEntry;
}

export class InFlight {
  private readonly bySender = new Map<string, Map<bigint, InFlightEntry>>();
  /** The same entries, per payer by hash (RedisLedger's payer hash in memory). */
  private readonly byPayer = new Map<string, Map<string, Held>>();
  /** The same entries, per account their authorizations delegate, by hash. */
  private readonly byAuthority = new Map<string, Map<string, Held>>();

  /** `skipAfterBlocks` may change with a reload (`retune`); the entries stay. */
  constructor(public skipAfterBlocks: bigint) {}

  /** Forgets what the head shows done, then returns what the sender still has in flight. */
  pending(sender: string, stateNonce: bigint, head: bigint): ReadonlyMap<bigint, InFlightEntry> {
    const entries = this.bySender.get(sender);
    if (entries === undefined) return EMPTY;
    for (const entry of entries.values()) {
      if (entry.nonce < stateNonce || this.skipped(entry, head)) this.remove(sender, entry);
    }
    return this.bySender.get(sender) ?? EMPTY;
  }

  /** Forgets the payer's entries that `head` shows skipped, then sums what the rest may spend. */
  reserved(payer: string, head: bigint): bigint {
    let sum = 0n;
    for (const { sender, entry } of this.byPayer.get(payer)?.values() ?? []) {
      if (this.skipped(entry, head)) this.remove(sender, entry);
      else sum += entry.cost;
    }
    return sum;
  }

  /** Whether the payer pays for a transaction in flight at `head` (not skipped) of another sender. */
  sponsoring(payer: string, head: bigint): boolean {
    this.reserved(payer, head);
    for (const { sender } of this.byPayer.get(payer)?.values() ?? []) if (sender !== payer) return true;
    return false;
  }

  /** Forgets the payer's entries that `head` shows skipped, then counts the rest. */
  paidBy(payer: string, head: bigint): number {
    this.reserved(payer, head);
    return this.byPayer.get(payer)?.size ?? 0;
  }

  /** Whether a transaction in flight at `head` (not skipped) carries an authorization that delegates `account`. */
  delegating(account: string, head: bigint): boolean {
    for (const { sender, entry } of this.byAuthority.get(account)?.values() ?? []) {
      if (this.skipped(entry, head)) this.remove(sender, entry);
    }
    return this.byAuthority.has(account);
  }

  /** Takes the slot at `entry.nonce`, in place of the entry that held it, if any. */
  add(sender: string, entry: InFlightEntry): void {
    const replaced = this.bySender.get(sender)?.get(entry.nonce);
    if (replaced !== undefined) this.remove(sender, replaced);
    const entries = this.bySender.get(sender) ?? new Map<bigint, InFlightEntry>();
    this.bySender.set(sender, entries.set(entry.nonce, entry));
    const held = this.byPayer.get(entry.payer) ?? new Map<string, Held>();
    this.byPayer.set(entry.payer, held.set(entry.hash, { sender, entry }));
    for (const authority of entry.authorities ?? []) {
      const delegations = this.byAuthority.get(authority) ?? new Map<string, Held>();
      this.byAuthority.set(authority, delegations.set(entry.hash, { sender, entry }));
    }
  }

  /** `hash` was acknowledged (ordered) when the head was `head`: it is pending until a block after that. */
  acknowledge(sender: string, nonce: bigint, hash: string, head: bigint): void {
    const entry = this.bySender.get(sender)?.get(nonce);
    if (entry?.hash !== hash || head <= entry.head) return;
    const seen = { ...entry, head };
    this.bySender.get(sender)!.set(nonce, seen);
    this.byPayer.get(entry.payer)!.set(hash, { sender, entry: seen });
    for (const authority of entry.authorities ?? []) this.byAuthority.get(authority)!.set(hash, { sender, entry: seen });
  }

  /** Gives back the slot of `hash`, if it still holds one. */
  release(sender: string, nonce: bigint, hash: string): void {
    const entry = this.bySender.get(sender)?.get(nonce);
    if (entry?.hash === hash) this.remove(sender, entry);
  }

  /** Drops every entry admitted more than `skipAfterBlocks` before `head`. */
  sweep(head: bigint): void {
    for (const [sender, entries] of this.bySender) {
      for (const entry of entries.values()) if (this.skipped(entry, head)) this.remove(sender, entry);
    }
  }

  private skipped(entry: InFlightEntry, head: bigint): boolean {
    return head >= entry.head + this.skipAfterBlocks;
  }

  private remove(sender: string, entry: InFlightEntry): void {
    const entries = this.bySender.get(sender)!;
    entries.delete(entry.nonce);
    if (entries.size === 0) this.bySender.delete(sender);
    const held = this.byPayer.get(entry.payer)!;
    held.delete(entry.hash);
    if (held.size === 0) this.byPayer.delete(entry.payer);
    for (const authority of entry.authorities ?? []) {
      const delegations = this.byAuthority.get(authority)!;
      delegations.delete(entry.hash);
      if (delegations.size === 0) this.byAuthority.delete(authority);
    }
  }
}

const EMPTY: ReadonlyMap<bigint, InFlightEntry> = new Map();
