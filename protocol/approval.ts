/**
 * The transaction-scoped approval context of EIP-8141 (`sender_approved`, `payer`) and the two
 * ways a validation-prefix frame can change it: `APPROVE` executed by account code, and the
 * default code of a code-less account. Shared by direct evaluation and the EVM simulation, so
 * both read the rules from one place.
 */
import type { Frame, FrameTransaction } from './frame-codec.js';
import { COST_PER_STATE_BYTE, STATE_BYTES_PER_NEW_ACCOUNT } from './state-gas.js';

export const APPROVE_PAYMENT = 1;
export const APPROVE_EXECUTION = 2;
/** EIP-8037 STATE_BYTES_PER_NEW_ACCOUNT × CPSB, charged by APPROVE when the nonce creates the sender. */
export const NEW_ACCOUNT_STATE_GAS = STATE_BYTES_PER_NEW_ACCOUNT * COST_PER_STATE_BYTE;

/** Schemes default code accepts: upstream's SECP256K1 and the project's MLDSA65 (frame-transactions.md section 7). */
const DEFAULT_CODE_SCHEMES = new Set([0x01, 0x65]);

/** What an APPROVE did: granted, reverted the call frame, or halted it exceptionally. */
export type ApproveOutcome = { readonly ok: true } | { readonly ok: false; readonly halt: boolean; readonly why: string };

const OK: ApproveOutcome = { ok: true };
const revert = (why: string): ApproveOutcome => ({ ok: false, halt: false, why });

/** The context as it stood at one moment, to go back to when the call frame that changed it fails. */
export interface ApprovalState {
  readonly senderApproved: boolean;
  readonly payer: string | undefined;
  readonly senderExists: boolean;
}

export class Approvals {
  senderApproved = false;
  payer: string | undefined;

  constructor(
    private readonly tx: FrameTransaction,
    /** Whether the sender exists (EIP-161): before the prefix runs, then as a deploy frame left it. */
    private senderExists: boolean,
  ) {}

  /** A deploy frame put code at the sender: it exists (APPROVE owes no creation state gas). */
  senderCreated(): void {
    this.senderExists = true;
  }

  snapshot(): ApprovalState {
    return { senderApproved: this.senderApproved, payer: this.payer, senderExists: this.senderExists };
  }

  /** APPROVE's effects are journaled with the call frame that made them: a failed frame undoes them. */
  restore(state: ApprovalState): void {
    ({ senderApproved: this.senderApproved, payer: this.payer, senderExists: this.senderExists } = state);
  }

  /**
   * APPROVE(scope) by code running at `address` in `frame` (EIP-8141 "APPROVE Instruction").
   * `payerBalance` is read only for a payment scope; `stateGasLeft` is the frame's pool (its
   * limit until something in the frame drew on it). On success the context is updated.
   */
  async approve(
    frame: Frame,
    address: string,
    scope: bigint,
    maxCost: bigint,
    payerBalance: () => Promise<bigint>,
    stateGasLeft = frame.stateGas,
  ): Promise<ApproveOutcome> {
    const target = frame.target ?? this.tx.sender;
    if (address !== target) return revert('APPROVE outside the frame target');
    const allowed = BigInt(frame.flags & 3);
    if (scope === 0n || (scope & ~allowed) !== 0n) return revert(`APPROVE(${scope}) beyond the frame's allowed scope ${allowed}`);
    const execution = (scope & BigInt(APPROVE_EXECUTION)) !== 0n;
    const payment = (scope & BigInt(APPROVE_PAYMENT)) !== 0n;
    if (execution && (this.senderApproved || target !== this.tx.sender)) return revert('execution approved twice or not by the sender');
    if (payment) {
      if (this.payer !== undefined) return revert('payment approved twice');
      if (!execution && !this.senderApproved) return revert('payment approved before execution');
      if ((await payerBalance()) < maxCost) return revert('the payer cannot cover the maximum cost');
      if (!this.senderExists && stateGasLeft < NEW_ACCOUNT_STATE_GAS) {
        return {
          ok: false,
          halt: true,
          why: `creating the sender needs ${NEW_ACCOUNT_STATE_GAS} state gas, the frame has ${stateGasLeft} left`,
        };
      }
    }
    if (execution) this.senderApproved = true;
    if (payment) {
      this.senderExists = true;
      this.payer = target;
    }
    return OK;
  }
}

/**
 * Default code in a VERIFY frame (EIP-8141 "Default code", with the project's MLDSA65): the
 * scope it approves, or why it reverts. Signatures are already verified by then.
 */
export function defaultCodeScope(tx: FrameTransaction, frame: Frame): { scope: bigint } | { why: string } {
  const scope = frame.flags & 3;
  const target = frame.target ?? tx.sender;
  const index = (scope & APPROVE_EXECUTION) !== 0 ? 0 : 1;
  const entry = tx.signatures[index];
  if (
    scope === 0 ||
    entry === undefined ||
    !DEFAULT_CODE_SCHEMES.has(entry.scheme) ||
    entry.msg !== undefined ||
    (entry.signer ?? tx.sender) !== target
  ) {
    return { why: `default code: signature ${index} must be a SECP256K1 or MLDSA65 entry of ${target} over the signature hash` };
  }
  return { scope: BigInt(scope) };
}
