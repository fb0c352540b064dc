import { expect } from 'chai';
import { sharedFor } from '../../src/recent.js';

/** A load the test settles by hand, counting how often it was started. */
function loads() {
  const started: Array<{ resolve: (value: string) => void; reject: (err: Error) => void; promise: Promise<string> }> = [];
  const load = () => {
    let resolve!: (value: string) => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<string>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    started.push({ resolve, reject, promise });
    return promise;
  };
  return { load, started };
}

/** Lets the rejection handlers sharedFor attached run. */
const settled = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    () => undefined,
  );

describe('recent: one read shared for a while', () => {
  // The clock sharedFor reads, stepped by the tests: a TTL is time, and waiting for it would only slow the suite.
  const realNow = Date.now;
  let clock = 0;
  beforeEach(() => {
    clock = 1_700_000_000_000;
    Date.now = () => clock;
  });
  afterEach(() => {
    Date.now = realNow;
  });

  it('starts nothing until the first call', () => {
    const { load, started } = loads();
    sharedFor(1_000, load);
    expect(started).to.have.length(0);
  });

  it("gives every caller within the TTL the first caller's promise, and loads once", async () => {
    const { load, started } = loads();
    const read = sharedFor(1_000, load);
    const first = read();
    clock += 500;
    const second = read();
    expect(second).to.equal(first);
    started[0]!.resolve('head 7');
    expect(await first).to.equal('head 7');
    clock += 499;
    expect(read()).to.equal(first);
    expect(started).to.have.length(1);
  });

  it('loads again once the TTL has run out, to the millisecond', async () => {
    const { load, started } = loads();
    const read = sharedFor(1_000, load);
    const first = read();
    started[0]!.resolve('head 7');
    await first;
    clock += 1_000;
    const second = read();
    expect(second).not.to.equal(first);
    expect(started).to.have.length(2);
    started[1]!.resolve('head 8');
    expect(await second).to.equal('head 8');
  });

  it('shares nothing with a TTL of 0', () => {
    const { load, started } = loads();
    const read = sharedFor(0, load);
    expect(read()).not.to.equal(read());
    expect(started).to.have.length(2);
  });

  it('hands a failure to the callers that shared it, then forgets it: the next call retries within the TTL', async () => {
    const { load, started } = loads();
    const read = sharedFor(60_000, load);
    const first = read();
    const second = read();
    expect(second).to.equal(first);
    const failure = new Error('upstream unavailable');
    started[0]!.reject(failure);
    let caught: unknown;
    await first.catch((err: unknown) => (caught = err));
    expect(caught).to.equal(failure);
    const retry = read();
    expect(retry).not.to.equal(first);
    expect(started).to.have.length(2);
    started[1]!.resolve('head 9');
    expect(await retry).to.equal('head 9');
    expect(read()).to.equal(retry);
  });

  it("does not let an expired read's late failure forget the read that replaced it", async () => {
    const { load, started } = loads();
    const read = sharedFor(1_000, load);
    const stale = read();
    clock += 1_000;
    const fresh = read();
    expect(started).to.have.length(2);
    started[0]!.reject(new Error('late'));
    await settled(stale);
    expect(read()).to.equal(fresh);
    expect(started).to.have.length(2);
  });
});
