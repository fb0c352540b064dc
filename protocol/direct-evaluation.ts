/**
 * Direct evaluation of a validation prefix made only of protocol-defined frames (EIP-8141,
 * "Direct Evaluation of Protocol-Defined Frames"; frame-transactions.md section 7): every frame
 * targets a code-less account (default code) or is the expiry frame. No EVM runs: the outcome is
 * fixed by the transaction, the signatures (already verified) and a few facts of head state.
 * Each frame takes the frame runner's own EVM-free step (defined-frames.ts).
 *
 * Default code in a VERIFY frame with allowed scope `s = flags & 3`: the entry at index 0 (when
 * `s` includes execution) or 1 must be SECP256K1, or MLDSA65 (this project's extension), with
 * an empty `msg` and `resolved_signer == resolved_target`; then `APPROVE(s)`. In a DEFAULT
 * frame it returns as empty code would, so a deploy frame aimed at one installs nothing.
 *
 * Gas: each frame pays its target's access at entry (EIP-2929's costs on this chain) (the sender is warm, a target is
 * warm once an earlier frame touched it; the head's coinbase is not: the transaction runs in a
 * block someone else proposes); the expiry frame also runs the canonical verifier's 51 gas;
 * APPROVE's payment charges state gas for a sender that does not exist yet. The deadline itself
 * is compared by admission.
 */
import { Approvals } from './approval.js';
import { CHAIN } from './chain.js';
import { entryCharge, runDefaultCode } from './defined-frames.js';
import { FrameMode, type FrameTransaction } from './frame-codec.js';
import { refuseFrame } from './refusal.js';

const { coldAccountAccessGas, warmAccountAccessGas } = CHAIN;

export interface DirectPrefix {
  readonly tx: FrameTransaction;
  /** Index of the frame that grants payment (the prefix's last). */
  readonly prefixEnd: number;
  readonly maxCost: bigint;
  /** Whether the sender exists at head (EIP-161: a nonce, a balance or code). */
  readonly senderExists: boolean;
  readonly balanceOf: (address: string) => Promise<bigint>;
}

/** Throws a `verify-rejected` Refusal where the EL would find the transaction invalid. */
export async function evaluateDirectly({ tx, prefixEnd, maxCost, senderExists, balanceOf }: DirectPrefix): Promise<void> {
  const warm = new Set([tx.sender]);
  const access = (address: string) => {
    if (warm.has(address)) return warmAccountAccessGas;
    warm.add(address);
    return coldAccountAccessGas;
  };
  const approvals = new Approvals(tx, senderExists);
  for (let i = 0; i <= prefixEnd; i++) {
    const frame = tx.frames[i]!;
    const target = frame.target ?? tx.sender;
    const species = frame.mode === FrameMode.Verify ? 'VERIFY' : 'deploy';
    const entry = entryCharge(i, frame, access(target));
    if (!entry.ok) refuseFrame(i, species, entry.cause, entry.detail);
    if (entry.expiry) continue;
    // Aimed at a code-less account, a deploy frame runs empty code: it installs nothing.
    if (frame.mode !== FrameMode.Verify) refuseFrame(i, species, 'no code at the sender after deploy');
    const outcome = await runDefaultCode(tx, frame, approvals, maxCost, balanceOf);
    if (!outcome.ok) refuseFrame(i, species, outcome.cause, outcome.detail);
  }
}
