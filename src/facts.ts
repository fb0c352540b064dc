/**
 * Facts that one plugin records about a request for later plugins to read. Append-only: a fact
 * is set at most once, so a later plugin cannot undo an earlier one's finding. What a request
 * costs its source goes on its tab instead (request-tab.ts).
 */
export interface Fact<T> {
  readonly name: string;
  /** Phantom member carrying the value type; never read. */
  readonly type?: T;
}

/** Set by auth: the request carried the operator bearer token. */
export const OPERATOR: Fact<boolean> = { name: 'operator' };

/** Set by rate-limit: the source key the request is counted against (its address or /48, see rate-limit/source.ts). */
export const SOURCE: Fact<string> = { name: 'source' };

/**
 * Set by size-limit on a gas-heavy read (src/call-gas.ts): the gas its calls may burn, summed
 * over eth_simulateV1's calls, a call naming no gas counted at the endpoint's cap. rate-limit
 * prices the read by it.
 */
export const CALL_GAS: Fact<bigint> = { name: 'call-gas' };

/** Set by the core on a WebSocket message: its connection can take subscriptions' notifications. */
export const SUBSCRIBER: Fact<true> = { name: 'subscriber' };

/**
 * Set by the core once the response has closed (also when it closed before the chain ran): nobody
 * reads the answer, so a plugin still deciding may stop (the gate forwards nothing then).
 */
export const CLOSED: Fact<true> = { name: 'closed' };

export class Facts {
  // Fact, value, fact, value...: a request records a handful at most, and most reads none: a flat
  // list costs a read less than a Map.
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
