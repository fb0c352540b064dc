/**
 * EIP-8141 "Revalidation", for the frame transactions this instance admitted: while one is
 * pending (ordered, not yet seen executed or skipped: in-flight.ts), it is looked at again at
 * each new head. If its expiry deadline is no later than the head's timestamp, no block can
 * include it any more; if everything its verdict read (dependencies.ts: accounts, code, sender
 * slots) reads the same there, it stands; otherwise it is judged again at that head (its payer's
 * funds, its validation prefix). One the chain will now skip gives its reservation back at once, in the
 * ledger the fleet shares, so that its payer's funds and its sender's nonce are free before
 * `skip_after_blocks` ends; it is counted (`svc_ingress_gate_revalidations_total`).
 *
 * At the shipped `skip_after_blocks` (1) nothing stays pending past the first block after its
 * ordering, so the gate makes no Revalidator then; it matters where blocks may lag their
 * ordering (`skip_after_blocks` above 1). Heads are read as the gate reads them (per
 * `head_cache_ms`), every `REVALIDATE_EVERY_MS` while anything is pending, never otherwise.
 */
import type { StateDependencies } from '../../../protocol/index.js';
import type { Logger } from '../../../src/plugin.js';
import { deadlineReached } from './admission.js';
import type { Submission } from '../submission/decode.js';
import { stillHolds } from './dependencies.js';
import { OVER_SIMULATION_BUDGET, Refusal, SIMULATION_ERROR } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Head, HeadState } from './state.js';

export interface PendingFrame {
  readonly sub: Submission;
  /** Whom the judgement was for: a judgement again queues in the pool as that source. */
  readonly source: string;
  readonly dependencies: StateDependencies;
  /** The head read once the submission target acknowledged it. */
  readonly seenAt: bigint;
}

/** `released`: it will now be skipped, its reservation given back; `kept`: judged again and still good. */
export type Revalidation = 'unchanged' | 'kept' | 'released' | 'done';

export interface RevalidatorParts {
  readonly state: HeadState;
  readonly ledger: Ledger;
  readonly skipAfterBlocks: bigint;
  /** Judges `pending` again at `head`: what it read, or throws the Refusal it would now get. */
  readonly rejudge: (pending: PendingFrame, head: Head) => Promise<StateDependencies>;
  readonly counted: (outcome: Revalidation) => void;
  readonly log: Logger;
}

export const REVALIDATE_EVERY_MS = 250;

/** A refusal that says the chain will skip it: the payer's funds, or a prefix rule broken at this head. */
export const restsOnState = (refusal: Refusal): boolean => {
  if (refusal.reason === 'payer-balance') return true;
  const cause = String(refusal.extra?.cause ?? '');
  return refusal.reason === 'verify-rejected' && !cause.startsWith(SIMULATION_ERROR) && cause !== OVER_SIMULATION_BUDGET;
};
/** Pending frame transactions followed at once; past it the oldest are let go (they end by `skip_after_blocks`). */
const TRACKED_MAX = 10_000;

export class Revalidator {
  private readonly pending = new Map<string, PendingFrame>();
  private lastHead = -1n;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> = Promise.resolve();

  constructor(private readonly parts: RevalidatorParts) {}

  track(pending: PendingFrame): void {
    if (this.pending.size >= TRACKED_MAX) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(pending.sub.hash, pending);
    this.timer ??= setInterval(() => void this.pass(), REVALIDATE_EVERY_MS).unref();
  }

  /** One look at the latest head, if it is new; passes never overlap. Resolves when it is done. */
  pass(): Promise<void> {
    this.passing = this.passing.then(() => this.look()).catch(() => undefined);
    return this.passing;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }

  private async look(): Promise<void> {
    const head = await this.parts.state.latest();
    if (head.number <= this.lastHead) return;
    this.lastHead = head.number;
    // One at a time: a judgement again may take a pool thread, and the pool's queues are the
    // new submissions'; nobody pays for these, so they never crowd them out.
    for (const pending of [...this.pending.values()]) {
      if (this.closed) return;
      await this.again(pending, head);
    }
    if (this.pending.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async again(pending: PendingFrame, head: Head): Promise<void> {
    const { sub } = pending;
    const { state, counted } = this.parts;
    const done = () => {
      this.pending.delete(sub.hash);
      counted('done');
    };
    if (head.number >= pending.seenAt + this.parts.skipAfterBlocks) return done();
    if ((await state.account(sub.sender, head)).nonce > sub.nonce) return done();
    if (deadlineReached(sub, head)) return this.release(pending, head, 'expired');
    if (await stillHolds(pending.dependencies, state, head)) return counted('unchanged');
    try {
      const dependencies = await this.parts.rejudge(pending, head);
      if (this.closed || !this.pending.has(sub.hash)) return;
      this.pending.set(sub.hash, { ...pending, dependencies });
      counted('kept');
    } catch (err) {
      // Only a verdict on state frees it: unreadable state, a simulation that failed or ran
      // out of budget, or a bug says nothing of what the chain will do; it stays pending.
      if (err instanceof Refusal && restsOnState(err)) await this.release(pending, head, err.reason);
    }
  }

  private async release({ sub }: PendingFrame, head: Head, reason: string): Promise<void> {
    this.pending.delete(sub.hash);
    await this.parts.ledger.release(sub.sender, sub.nonce, sub.hash);
    this.parts.counted('released');
    this.parts.log.info('gate: a pending frame transaction can no longer be included: its reservation released', {
      hash: sub.hash,
      reason,
      head: head.number.toString(),
    });
  }
}
