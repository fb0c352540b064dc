import type { Answer } from './jsonrpc.js';

/**
 * Facts that one plugin records about a request for later plugins to read. Append-only: a fact
 * is set at most once, so a later plugin cannot undo an earlier one's finding.
 */
export interface Fact<T> {
  readonly name: string;
  /** Phantom member carrying the value type; never read. */
  readonly type?: T;
}

/** Set by auth: the request carried the operator bearer token. */
export const OPERATOR: Fact<boolean> = { name: 'operator' };

/**
 * Set by rate-limit on a submission: takes `tokens` more from the same source's submission
 * buckets, for work a later plugin can price only once it has decoded the request (a frame
 * transaction's validation prefix gas, for the gate). Answers the -32005 refusal when the source
 * is over quota.
 */
export const EXTRA_COST: Fact<ExtraCost> = { name: 'extra-cost' };
export type ExtraCost = (tokens: number) => Answer | undefined | Promise<Answer | undefined>;

/**
 * Set by rate-limit on a submission: takes `tokens` from the source's own submission bucket for
 * work already done, measured once it is done (the gate's time in its worker pool). Never
 * refuses: the bucket may go below zero, and the source's next requests wait until it has earned
 * the debt back.
 */
export const CHARGE: Fact<(tokens: number) => void> = { name: 'charge' };

/** Set by rate-limit: the source key the request is counted against (its address or /48, see rate-limit/source.ts). */
export const SOURCE: Fact<string> = { name: 'source' };

/**
 * Set by size-limit on a gas-heavy read (src/call-gas.ts): the gas its calls may burn, summed
 * over eth_simulateV1's calls, a call naming no gas counted at the endpoint's cap. rate-limit
 * prices the read by it.
 */
export const CALL_GAS: Fact<bigint> = { name: 'call-gas' };

/**
 * Set by rate-limit on a gas-heavy read: the core calls it once with the EL's time for the
 * answer, in milliseconds, from the request written on its EL connection to the answer's headers
 * (the wait for a free connection not counted), so that the source pays for time its tokens did
 * not cover.
 */
export const EL_TIME: Fact<(ms: number) => void> = { name: 'el-time' };

/**
 * Set by a plugin that holds something for the request's lifetime (rate-limit: the source's
 * in-flight slot): the core calls it once the response has closed, however it ended.
 */
export const ON_CLOSE: Fact<() => void> = { name: 'on-close' };

/** Set by the core on a WebSocket message: its connection can take subscriptions' notifications. */
export const SUBSCRIBER: Fact<true> = { name: 'subscriber' };

/** Set by the core when the response closed while plugins were still deciding: hold nothing for it. */
export const CLOSED: Fact<true> = { name: 'closed' };

export class Facts {
  // Fact, value, fact, value...: a request records a handful at most, and most reads one (their
  // in-flight slot): a flat list costs a read less than a Map.
  private readonly values: unknown[] = [];

  get<T>(fact: Fact<T>): T | undefined {
    const values = this.values;
    for (let i = 0; i < values.length; i += 2) if (values[i] === fact) return values[i + 1] as T;
    return undefined;
  }

  set<T>(fact: Fact<T>, value: T): void {
    for (let i = 0; i < this.values.length; i += 2) {
      if (this.values[i] === fact) throw new Error(`fact "${fact.name}" is already set`);
    }
    this.values.push(fact, value);
  }
}
