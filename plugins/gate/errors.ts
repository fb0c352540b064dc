/**
 * What the gate's parts throw (answers.ts makes them wire answers):
 * - `Refusal` (protocol/refusal.ts): a verdict on the transaction, a stable reason code (the
 *   ones of frame-transactions.md and the gate's own) plus a sentence for humans; -32000.
 * - `Unavailable`: the EL could not be read, not a verdict; -32603, fails closed.
 * - `PoolBusy`: a queue of the worker pool is full, not a verdict; -32005 for the source or the host.
 * - `Abandoned`: the client left while its work waited; nobody reads the answer.
 * - `SyncNonceGap`: EIP-7966's own answer to a nonce ahead of the sender's next; error 6.
 * Anything else is a bug and goes up to the chain.
 */
import { Refusal } from '../../protocol/index.js';

export { frameRefusal, Refusal, refuse, refuseFrame } from '../../protocol/index.js';

/** An EL refusal (`validation_method`): the reason is the EL's own text. */
export class ExecutionLayerRefusal extends Refusal {
  constructor(readonly elReason: string) {
    super('el-rejected', elReason);
  }
}

/**
 * A refusal that rests on what is in flight now (the ledger's slots and reservations), which other
 * submissions change within a head: answered, never cached, so that the same bytes sent again
 * once the nonce before them is in flight, or a slot was given back, are judged anew.
 */
export class InFlightRefusal extends Refusal {}

/**
 * The causes of a prefix refusal that say the gate could not judge, not what the chain will do
 * (a simulation that failed, or ran past its budget): what revalidation must not act on.
 */
export const SIMULATION_ERROR = 'simulation error';
export const OVER_SIMULATION_BUDGET = 'over the simulation budget';

/** The EL could not be read: not a verdict on the transaction. */
export class Unavailable extends Error {
  override name = 'Unavailable';
}

/** A queue of the pool is full, the source's own or the whole queue: not a verdict on the transaction. */
export class PoolBusy extends Error {
  override name = 'PoolBusy';

  constructor(
    message: string,
    readonly scope: 'source' | 'host' = 'host',
  ) {
    super(message);
  }
}

/** The client left while its work waited in the pool: dropped unrun, nobody to answer. */
export class Abandoned extends Error {
  override name = 'Abandoned';
}

/**
 * EIP-7966: a synchronous submission's nonce is ahead of the sender's next one. Not a verdict the
 * gate caches: answered with error 6 and that next nonce, before anything is reserved or judged.
 */
export class SyncNonceGap extends Error {
  override name = 'SyncNonceGap';

  constructor(readonly next: bigint) {
    super(`nonce gap: the sender's next nonce is ${next}`);
  }
}

/** How much of an unexpected error's message goes to the log. */
const BUG_MESSAGE_MAX = 200;

/**
 * An unexpected error as a refusal may name it (its class) and the operator's log may show it
 * (class, the start of its message, where it was thrown): never a stack in an answer.
 */
export function describeFault(err: unknown): { readonly errorClass: string; readonly bug: string } {
  const errorClass = err instanceof Error ? err.constructor.name : typeof err;
  const message = err instanceof Error ? err.message : String(err);
  const place = err instanceof Error ? (err.stack?.split('\n')[1]?.trim() ?? '') : '';
  return { errorClass, bug: `${errorClass}: ${message.slice(0, BUG_MESSAGE_MAX)} ${place}`.trim() };
}
