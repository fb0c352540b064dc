/**
 * A gate refusal: a stable reason code (the ones of frame-transactions.md and the gate's own)
 * plus a sentence for humans. Thrown by the gate's parts, turned into the wire error by
 * `errors.rejected` in one place (index.ts).
 */
export class Refusal extends Error {
  constructor(
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'Refusal';
  }
}

export function refuse(reason: string, detail: string): never {
  throw new Refusal(reason, detail);
}
