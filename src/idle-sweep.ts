/**
 * When a long-lived Map that keeps its idle entries sweeps them. A Map that loses and regains an
 * entry at each request costs V8 a new hash table every few requests once the Map is old (~0.7 µs
 * a request), so such Maps keep an entry that falls idle (a source at zero slots, a read no longer
 * in flight) and delete idle entries only when a new key would pass twice what the last sweep
 * left, and at least SWEEP_AT_LEAST: memory stays within twice the live entries, and the sweeps'
 * cost within one pass per entry added.
 */
const SWEEP_AT_LEAST = 1_024;

export class IdleSweep {
  private sweepAt = SWEEP_AT_LEAST;

  /** Before `map` takes `key`: if the key is new and the map holds enough, deletes every entry `idle` says is. */
  makeRoom<K, V>(map: Map<K, V>, key: K, idle: (value: V) => boolean): void {
    if (map.size < this.sweepAt || map.has(key)) return;
    for (const [kept, value] of map) if (idle(value)) map.delete(kept);
    this.sweepAt = Math.max(SWEEP_AT_LEAST, 2 * map.size);
  }
}
