/**
 * A gate refusal: a stable reason code (the ones of frame-transactions.md and the gate's own)
 * plus a sentence for humans. Thrown by the gate's parts, turned into the wire error by
 * `errors.rejected` in one place (index.ts).
 */
import type { StateDependencies } from './dependencies.js';

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

  /** The head state a validation-prefix refusal rests on (dependencies.ts), when known. */
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
  throw new Refusal('verify-rejected', `${mode} frame ${frame}: ${cause}${detail === undefined ? '' : ` (${detail})`}`, { frame, cause });
}
