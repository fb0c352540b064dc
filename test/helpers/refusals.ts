/** What a gate check throws, read as a submitter would: its reason code, or its whole message. */
import { Refusal } from '../../plugins/gate/errors.js';

function refusal(fn: () => unknown): Refusal | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof Refusal) return err;
    throw err;
  }
  return undefined;
}

/** The refusal `fn` throws; it must throw one. */
export function thrown(fn: () => unknown): Refusal {
  const err = refusal(fn);
  if (err === undefined) throw new Error('nothing was thrown');
  return err;
}

/** The refusal's reason code, or 'accepted'. */
export const reasonOf = (fn: () => unknown): string => refusal(fn)?.reason ?? 'accepted';

/** The refusal as a client reads it (`reason: detail`), or 'accepted'. */
export const verdictOf = (fn: () => unknown): string => refusal(fn)?.message ?? 'accepted';

/** What `fn` returns, or the refusal it throws as a client reads it (`reason: detail`). */
export function outcomeOf(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (err) {
    if (err instanceof Refusal) return err.message;
    throw err;
  }
}
