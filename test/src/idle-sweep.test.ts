import { expect } from 'chai';
import { IdleSweep } from '../../src/idle-sweep.js';

const idle = (value: number) => value === 0;

describe('idle sweep: when a Map that keeps its idle entries deletes them', () => {
  /** `count` entries at `value` (0: idle), their keys `prefix0`, `prefix1`, ... */
  const add = (map: Map<string, number>, prefix: string, count: number, value = 0) => {
    for (let i = 0; i < count; i++) map.set(`${prefix}${i}`, value);
    return map;
  };
  /** The map's size once a new key has been made room for. */
  const sizeForNew = (sweep: IdleSweep, map: Map<string, number>) => {
    sweep.makeRoom(map, 'new', idle);
    return map.size;
  };

  it('keeps every entry below 1,024, and for a key the map holds already', () => {
    const sweep = new IdleSweep();
    const map = add(new Map(), 'idle', 1_023);
    expect(sizeForNew(sweep, map)).to.equal(1_023);
    map.set('new', 0);
    sweep.makeRoom(map, 'idle0', idle);
    expect(map.size).to.equal(1_024);
  });

  it('deletes the idle entries, only those, for a new key at 1,024; then sweeps at 1,024 again, not at twice ten', () => {
    const sweep = new IdleSweep();
    const map = add(add(new Map(), 'live', 10, 1), 'idle', 1_014);
    sweep.makeRoom(map, 'new', idle);
    expect([...map.keys()]).to.deep.equal(Array.from({ length: 10 }, (_, i) => `live${i}`));
    expect(sizeForNew(sweep, add(map, 'again', 1_013)), 'at 1,023').to.equal(1_023);
    expect(sizeForNew(sweep, add(map, 'again', 1_014)), 'at 1,024').to.equal(10);
  });

  it('sweeps next at twice what it left', () => {
    const sweep = new IdleSweep();
    const map = add(add(new Map(), 'live', 1_000, 1), 'idle', 24);
    expect(sizeForNew(sweep, map), 'the first sweep').to.equal(1_000);
    expect(sizeForNew(sweep, add(map, 'later', 999)), 'below 2,000: kept').to.equal(1_999);
    expect(sizeForNew(sweep, add(map, 'later', 1_000)), 'at 2,000: swept').to.equal(1_000);
  });
});
