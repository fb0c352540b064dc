/**
 * A world held in memory, for running validation prefixes without an EL: accounts with code,
 * balances and slots, read through the frame runner's `StateReader`. Every address absent holds
 * nothing; the expiry verifier holds EIP-8141's code.
 */
import { decodeCode } from '../../../protocol/code-entry.js';
import { EXPIRY_VERIFIER, EXPIRY_VERIFIER_CODE } from '../../../protocol/frame-checks.js';
import { decodeFrameTransaction } from '../../../protocol/frame-codec.js';
import { OverlayStateManager, type StateReader } from '../../../protocol/evm/index.js';
import { type PrefixProgress, validatePrefix } from '../../../protocol/mempool/index.js';
import { checkFrameTransaction } from '../../../protocol/mempool/policy.js';
import { Refusal } from '../../../protocol/refusal.js';
import { RECIPIENT, type FrameFields, type FrameTxFields } from '../../../support/frames.js';

export const ONE_ETH = 10n ** 18n;

/** A value transfer after the prefix. */
export const transfer: FrameFields = { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 1n };
/** [self → sender, transfer], no signature entries: the sender's code approves. */
export const selfFrames = (sender: string, verifyGas = 50_000n): FrameTxFields => ({
  sender,
  frames: [{ mode: 1, flags: 3, executionGas: verifyGas }, transfer],
  signatures: [],
  fees: [0n, 2_000_000_000n, 0n],
});
const ZERO_WORD = `0x${'00'.repeat(32)}`;

export interface Held {
  code?: string;
  balance?: bigint;
  nonce?: bigint;
  /** Slot (32-byte hex) to word (32-byte hex). */
  slots?: Record<string, string>;
}

/** What judging a prefix came to: 'valid', or its refusal's reason, frame, cause and detail. */
export type Verdict = 'valid' | { reason: string; message: string; frame?: number; cause?: string };

export class World {
  private readonly held = new Map<string, Held>();
  /** Every read the runner made, `kind address[ slot]`, in order. */
  readonly reads: string[] = [];
  private next = 0x1000;

  /** Puts `held` at a fresh address (or `at`), which it returns. */
  put(held: Held, at?: string): string {
    const address = (at ?? `0x${(this.next++).toString(16).padStart(40, 'c')}`).toLowerCase();
    this.held.set(address, held);
    return address;
  }

  readonly reader: StateReader = {
    account: async (address) => {
      this.reads.push(`account ${address}`);
      const held = this.held.get(address);
      return { nonce: held?.nonce ?? 0n, balance: held?.balance ?? 0n };
    },
    code: async (address) => {
      this.reads.push(`code ${address}`);
      return decodeCode(address === EXPIRY_VERIFIER ? EXPIRY_VERIFIER_CODE : (this.held.get(address)?.code?.toLowerCase() ?? '0x'));
    },
    storage: async (address, slot) => {
      this.reads.push(`storage ${address} ${slot}`);
      return this.held.get(address)?.slots?.[slot] ?? ZERO_WORD;
    },
  };

  /**
   * The mempool's judgement of `raw`'s prefix in this world: its static and mempool checks, then
   * the prefix run under the trace rules. `checkBudget` is called where the budget is checked;
   * `progress` is kept where the run is. What is not a Refusal is thrown.
   */
  async judge(
    raw: string,
    { checkBudget = () => {}, progress = { frame: 0, mode: 'VERIFY' } }: { checkBudget?: () => void; progress?: PrefixProgress } = {},
  ): Promise<{ verdict: Verdict; progress: PrefixProgress }> {
    const tx = decodeFrameTransaction(raw);
    try {
      const facts = checkFrameTransaction(tx, { chainId: 8141n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n });
      const state = new OverlayStateManager(this.reader, tx.sender);
      await validatePrefix({ tx, facts, state, progress, checkBudget, waiting: (work) => work });
      return { verdict: 'valid', progress };
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const { frame, cause } = (err.extra ?? {}) as { frame?: number; cause?: string };
      return { verdict: { reason: err.reason, message: err.message, frame, cause }, progress };
    }
  }
}

/** The refusal a VERIFY (or deploy) frame's failure comes to. */
export const rejected = (frame: number, cause: string, detail?: string, mode = 'VERIFY'): Verdict => ({
  reason: 'verify-rejected',
  message: `verify-rejected: ${mode} frame ${frame}: ${cause}${detail === undefined ? '' : ` (${detail})`}`,
  frame,
  cause,
});
