/**
 * What a runtime keeps for the one a reload builds next (`PluginEnv.carried`): each runtime has
 * its own `CarryOver`, built from the one it replaces, so nothing lives in globals and a runtime
 * that fails to build leaves the running one's state untouched.
 */
import type { Carried } from './plugin.js';

export class CarryOver implements Carried {
  /** What this runtime keeps, by key: handed to the next one. */
  readonly kept = new Map<string, object>();
  private readonly adoptions: (() => void)[] = [];

  /** `previous`: what the replaced runtime kept (none at start). */
  constructor(private readonly previous: ReadonlyMap<string, object> = new Map()) {}

  keep<T extends object>(key: string, make: () => T, adopt?: (kept: T) => void): T {
    // Kept twice by one runtime (a plugin created twice with one env, as tests do): shared.
    if (this.kept.has(key)) return this.kept.get(key) as T;
    const carried = this.previous.get(key) as T | undefined;
    const value = carried ?? make();
    this.kept.set(key, value);
    if (carried !== undefined && adopt !== undefined) this.adoptions.push(() => adopt(carried));
    return value;
  }

  /** Called once the new runtime is in place: each carried object adopts the new configuration. */
  commit(): void {
    for (const adopt of this.adoptions.splice(0)) adopt();
  }
}
