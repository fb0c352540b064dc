/**
 * One read shared by every caller for `ttlMs`: the first caller starts it, the others get the
 * same promise until it expires. A read that fails is forgotten at once, so the next caller
 * retries instead of inheriting the failure.
 */
export function sharedFor<T>(ttlMs: number, load: () => Promise<T>): () => Promise<T> {
  let current: { promise: Promise<T>; expires: number } | undefined;
  return () => {
    const now = Date.now();
    if (current === undefined || now >= current.expires) {
      const entry = { promise: load(), expires: now + ttlMs };
      current = entry;
      entry.promise.catch(() => {
        if (current === entry) current = undefined;
      });
    }
    return current.promise;
  };
}
