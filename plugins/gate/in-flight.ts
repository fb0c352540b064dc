/**
 * Admitted transactions not yet executed, per sender (spec 4.4 in-flight caps) and the balance
 * they reserve per payer. An entry stops counting as soon as the head shows it done:
 * - executed: the sender's state nonce has passed it;
 * - skipped (ordered, then dropped by the EL): `skipAfterBlocks` heads went by without that;
 * so the cap can never leak slots. Pruning is lazy, when the sender submits again, plus a
 * bounded sweep of stale entries so that abandoned senders do not hold memory.
 */
export interface InFlightEntry {
  readonly hash: string;
  readonly nonce: bigint;
  readonly payer: string;
  readonly cost: bigint;
  readonly head: bigint;
}

export class InFlight {
  private readonly bySender = new Map<string, Map<bigint, InFlightEntry>>();
  private readonly reservedByPayer = new Map<string, bigint>();

  constructor(private readonly skipAfterBlocks: bigint) {}

  /** Forgets what the head shows done, then returns what the sender still has in flight. */
  pending(sender: string, stateNonce: bigint, head: bigint): ReadonlyMap<bigint, InFlightEntry> {
    const entries = this.bySender.get(sender);
    if (entries === undefined) return EMPTY;
    for (const entry of entries.values()) {
      if (entry.nonce < stateNonce || head >= entry.head + this.skipAfterBlocks) this.remove(sender, entry);
    }
    return this.bySender.get(sender) ?? EMPTY;
  }

  reserved(payer: string): bigint {
    return this.reservedByPayer.get(payer) ?? 0n;
  }

  add(sender: string, entry: InFlightEntry): void {
    let entries = this.bySender.get(sender);
    if (entries === undefined) this.bySender.set(sender, (entries = new Map()));
    entries.set(entry.nonce, entry);
    this.reservedByPayer.set(entry.payer, this.reserved(entry.payer) + entry.cost);
  }

  /** Gives back the slot of `hash`, if it still holds one. */
  release(sender: string, nonce: bigint, hash: string): void {
    const entry = this.bySender.get(sender)?.get(nonce);
    if (entry?.hash === hash) this.remove(sender, entry);
  }

  /** Drops every entry admitted more than `skipAfterBlocks` before `head`. */
  sweep(head: bigint): void {
    for (const [sender, entries] of this.bySender) {
      for (const entry of entries.values()) if (head >= entry.head + this.skipAfterBlocks) this.remove(sender, entry);
    }
  }

  private remove(sender: string, entry: InFlightEntry): void {
    const entries = this.bySender.get(sender)!;
    entries.delete(entry.nonce);
    if (entries.size === 0) this.bySender.delete(sender);
    const left = this.reserved(entry.payer) - entry.cost;
    if (left > 0n) this.reservedByPayer.set(entry.payer, left);
    else this.reservedByPayer.delete(entry.payer);
  }
}

const EMPTY: ReadonlyMap<bigint, InFlightEntry> = new Map();
