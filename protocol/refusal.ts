/**
 * How the chain's rules say a transaction is not acceptable: a `Refusal`, a stable reason code
 * (frame-transactions.md's and the gate's own) and a sentence for humans. Nothing here knows the
 * wire: the gate turns a Refusal into its -32000 answer (plugins/gate/errors.ts).
 */

/** What a validation-prefix verdict read from head state: accounts, code hashes, sender slots. */
export interface StateDependencies {
  readonly accounts: ReadonlyArray<readonly [address: string, nonce: string, balance: string]>;
  /** keccak-256 of the code, `0x` for none. */
  readonly codes: ReadonlyArray<readonly [address: string, codeHash: string]>;
  readonly slots: ReadonlyArray<readonly [address: string, slot: string, word: string]>;
}

export class Refusal extends Error {
  constructor(
    readonly reason: string,
    readonly detail: string,
    /** Members added to `data` beside `reason` (a VERIFY refusal's frame and cause). */
    readonly extra?: Readonly<Record<string, string | number>>,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'Refusal';
  }

  /** The head state a validation-prefix refusal rests on, when known. */
  dependencies: StateDependencies | undefined;
}

export function refuse(reason: string, detail: string): never {
  throw new Refusal(reason, detail);
}

/**
 * frame-transactions.md section 8: a validation-prefix frame failed. `cause` is short and
 * stable ("reverted", "out of gas", "no APPROVE", "banned opcode TIMESTAMP", …) and goes into
 * `data.cause`; `detail`, for humans, only into the message.
 */
export function refuseFrame(frame: number, mode: 'VERIFY' | 'deploy', cause: string, detail?: string): never {
  throw frameRefusal(frame, mode, cause, detail);
}

/** The Refusal `refuseFrame` throws. */
export function frameRefusal(frame: number, mode: 'VERIFY' | 'deploy', cause: string, detail?: string): Refusal {
  return new Refusal('verify-rejected', `${mode} frame ${frame}: ${cause}${detail === undefined ? '' : ` (${detail})`}`, { frame, cause });
}
