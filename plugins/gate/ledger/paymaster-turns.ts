/**
 * Turns at a paymaster's one pending slot (EIP-8141's mempool: a paymaster with code pays for one
 * pending transaction at a time). First come, first served, a source polling the head took the
 * slot almost every block (another user of the same public paymaster admitted 6-13% of its tries,
 * issue 36 B2). Here the source that held a paymaster's slot last leaves the free slot to another
 * source refused for it within the last WAITING_HEADS heads: sources waiting for one paymaster
 * take it in turn. Kept here (bounded) and, in a fleet or with workers, where the ledger is
 * (paymaster-turns-shared.ts), so that a source polling one instance yields to a source waiting
 * on another.
 */

/** Heads a source refused for a paymaster's busy slot counts as waiting for it. */
export const WAITING_HEADS = 2n;
/** Paymasters remembered, and sources waiting for each; past these the oldest are forgotten. */
const MAX_PAYMASTERS = 10_000;
const MAX_WAITING = 1_000;

interface Turns {
  holder: string | undefined;
  /** Source -> the head it was last refused at. */
  readonly waiting: Map<string, bigint>;
}

/** Turns as admission asks them (here, in Redis, or in the primary process). */
export interface SlotTurns {
  /** Whether `source` held the paymaster's slot last and another source waits for it now. */
  yields(paymaster: string, source: string, head: bigint): Promise<boolean>;
  /** `source` was refused for the paymaster's busy slot at `head`. */
  waited(paymaster: string, source: string, head: bigint): Promise<void>;
  /** `source` took the paymaster's slot. */
  took(paymaster: string, source: string): Promise<void>;
}

export class PaymasterTurns {
  private readonly paymasters = new Map<string, Turns>();

  /** Whether `source` held the paymaster's slot last and another source waits for it now. */
  yields(paymaster: string, source: string, head: bigint): boolean {
    const turns = this.paymasters.get(paymaster);
    if (turns === undefined || turns.holder !== source) return false;
    for (const [other, at] of turns.waiting) {
      if (head - at > WAITING_HEADS) turns.waiting.delete(other);
      else if (other !== source) return true;
    }
    return false;
  }

  /** `source` was refused for the paymaster's busy slot at `head`. */
  waited(paymaster: string, source: string, head: bigint): void {
    const { waiting } = this.turnsOf(paymaster);
    waiting.delete(source);
    waiting.set(source, head);
    if (waiting.size > MAX_WAITING) waiting.delete(waiting.keys().next().value!);
  }

  /** `source` took the paymaster's slot. */
  took(paymaster: string, source: string): void {
    const turns = this.turnsOf(paymaster);
    turns.holder = source;
    turns.waiting.delete(source);
  }

  private turnsOf(paymaster: string): Turns {
    let turns = this.paymasters.get(paymaster);
    if (turns === undefined) {
      turns = { holder: undefined, waiting: new Map() };
      this.paymasters.set(paymaster, turns);
      if (this.paymasters.size > MAX_PAYMASTERS) this.paymasters.delete(this.paymasters.keys().next().value!);
    }
    return turns;
  }
}
