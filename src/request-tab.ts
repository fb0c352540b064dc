/**
 * One request's tab with its source, kept by the plugin that prices requests (rate-limit): what
 * a later plugin takes from it once it can price its work (a frame transaction's prefix gas, a
 * fee history's entries), what it owes for work measured once done (the gate's pool time), the
 * EL's time the core records for a gas-heavy read, and what runs once the response has closed.
 * Without a keeper (no rate-limit in the chain) nothing is taken, owed or recorded; close hooks
 * run all the same.
 */
import type { Answer } from './jsonrpc.js';

/** What the keeper does with each entry of the tab; an entry it leaves out costs nothing. */
export interface TabKeeper {
  /** Takes `tokens` more now: an Answer refuses the request (over quota). */
  readonly take?: (tokens: number) => Answer | undefined | Promise<Answer | undefined>;
  /** Owes `tokens` for work done: never refused, a debt the source's next requests wait out. */
  readonly owe?: (tokens: number) => void;
  /** The EL's time for the answer, in milliseconds (request written to headers received). */
  readonly elTime?: (ms: number) => void;
}

export class RequestTab {
  private keeper: TabKeeper | undefined;
  private hooks: Array<() => void> | undefined;
  private closed = false;

  /** Named once, by the first plugin that prices the request: a later one cannot take it over. */
  keep(keeper: TabKeeper): void {
    if (this.keeper !== undefined) throw new Error('the request tab is already kept');
    this.keeper = keeper;
  }

  take(tokens: number): Answer | undefined | Promise<Answer | undefined> {
    return tokens > 0 ? this.keeper?.take?.(tokens) : undefined;
  }

  owe(tokens: number): void {
    if (tokens > 0) this.keeper?.owe?.(tokens);
  }

  elTime(ms: number): void {
    this.keeper?.elTime?.(ms);
  }

  /** Runs `hook` once the response has closed (at once if it has), however it ended. */
  onClose(hook: () => void): void {
    if (this.closed) return hook();
    if (this.hooks === undefined) this.hooks = [hook];
    else this.hooks.push(hook);
  }

  /**
   * The response has closed (the core's, once): every hook runs, in the order given, each even if
   * one before it threw (what it holds is given back); the first error is thrown after them all.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const hooks = this.hooks;
    this.hooks = undefined;
    if (hooks === undefined) return;
    let failed: { error: unknown } | undefined;
    for (const hook of hooks) {
      try {
        hook();
      } catch (error) {
        failed ??= { error };
      }
    }
    if (failed !== undefined) throw failed.error;
  }
}
