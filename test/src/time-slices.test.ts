import { expect } from 'chai';
import { TimeSlices } from '../../src/time-slices.js';

describe('time slices: work that lets the event loop turn every millisecond (time-slices.ts)', () => {
  it('asks for no pause within a slice, then one that ends at the next turn, and starts a new slice there', async () => {
    const slices = new TimeSlices();
    expect(Array.from({ length: 15 }, () => slices.step())).to.deep.equal(Array(15).fill(undefined));
    const until = performance.now() + 2;
    while (performance.now() < until);
    let pause: Promise<void> | undefined;
    for (let i = 0; i < 16 && pause === undefined; i++) pause = slices.step();
    expect(pause, 'a pause once the slice is spent').to.be.instanceOf(Promise);
    let resolved = false;
    void pause!.then(() => (resolved = true));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(resolved, 'not before the event loop turns').to.equal(false);
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.resolve();
    expect(resolved, 'once it turned').to.equal(true);
    expect(Array.from({ length: 15 }, () => slices.step())).to.deep.equal(Array(15).fill(undefined));
  });
});
