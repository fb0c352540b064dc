/**
 * The gate's worker pool across reloads: a reload that leaves the pool's numbers as they were
 * hands the running pool on (`PluginEnv.carried`), rather than starting a second one beside it
 * while the old chain finishes its requests (twice the threads, two fair queues). Each chain that
 * uses the pool holds it; the last to let go closes it.
 */
import type { Carried } from '../../../src/plugin.js';
import type { WorkPool } from './work-pool.js';

interface Held {
  readonly pool: WorkPool;
  holders: number;
}

/** The pool kept under `key` (its numbers), or a new one from `make`; `letGo` is idempotent. */
export function holdPool(carried: Carried, key: string, make: () => WorkPool): { readonly pool: WorkPool; letGo(): Promise<void> } {
  const held = carried.keep<Held>(`gate:pool:${key}`, () => ({ pool: make(), holders: 0 }));
  held.holders++;
  let holding = true;
  return {
    pool: held.pool,
    async letGo() {
      if (!holding) return;
      holding = false;
      if (--held.holders === 0) await held.pool.close();
    },
  };
}
