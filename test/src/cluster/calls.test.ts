/**
 * Calls from a real cluster worker (test/src/cluster/calls-worker.ts, forked by this process as
 * the primary) to objects this process hosts: values and errors carried back, calls made in one
 * turn sent as one message, and the timeout when the primary does not answer. The workers of a
 * whole ingress sharing rate limits and the gate's ledger this way are test/e2e/workers.test.ts.
 */
import { expect } from 'chai';
import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { callPrimary, hostService } from '../../../src/cluster/calls.js';
import { within } from '../../../support/within.js';
import type { CallSpec, Command, Outcome, Report } from './calls-worker.js';

const SERVICE = 'calls-test';
const CHANNEL = 'svc-ingress:call';
const error = (message: string, code?: string): Outcome => ({ error: { name: 'Error', message, code } });

describe('cluster calls: a worker calling objects the primary hosts', () => {
  let worker: Worker;
  /** The number of calls in each call message the primary received. */
  const batches: number[] = [];
  /** The init of each object the primary built. */
  const builds: unknown[] = [];
  /** Answers held back by `hold`, to release by hand. */
  const held: Array<() => void> = [];
  let settings: typeof cluster.settings;

  const record = (_worker: Worker, message: unknown) => {
    const batch = message as { channel?: unknown; items?: unknown[] } | null;
    if (batch?.channel === CHANNEL) batches.push(batch.items!.length);
  };
  const call = (key: string, method: string, args: unknown[] = [], init: unknown = { start: 0 }): CallSpec => ({
    service: SERVICE,
    key,
    init,
    method,
    args,
  });
  /** Has the worker make `calls` and returns its report. */
  const make = async (calls: CallSpec[], oneTurnEach = false): Promise<Report> => {
    batches.length = 0;
    const report = new Promise<Report>((resolve) => {
      const onMessage = (message: unknown) => {
        if ((message as Report | null)?.channel !== 'calls-test:done') return;
        worker.off('message', onMessage);
        resolve(message as Report);
      };
      worker.on('message', onMessage);
    });
    worker.send({ channel: 'calls-test:do', calls, oneTurnEach } satisfies Command);
    return within(5_000, "the worker's report", report);
  };

  before(async () => {
    hostService(SERVICE, (init) => {
      builds.push(init);
      let total = (init as { start: number }).start;
      return {
        add: (n: number) => (total += n),
        double: (n: bigint) => n * 2n,
        fail: () => {
          throw new Error('hosted failure');
        },
        failPlainly: () => {
          throw 'a plain string';
        },
        failLater: async () => {
          throw new Error('hosted async failure');
        },
        hold: () => new Promise<string>((resolve) => held.push(() => resolve('late'))),
      };
    });
    cluster.on('message', record);
    settings = cluster.settings;
    // As runPrimary sets it, with this suite's worker script.
    cluster.setupPrimary({ exec: fileURLToPath(new URL('./calls-worker.js', import.meta.url)), serialization: 'advanced' });
    worker = cluster.fork();
    const [ready] = (await within(5_000, 'the worker ready', once(worker, 'message'))) as [{ channel: string }];
    expect(ready).to.deep.equal({ channel: 'calls-test:ready' });
  });
  after(async () => {
    cluster.off('message', record);
    for (const release of held.splice(0)) release();
    if (worker !== undefined && !worker.isDead()) {
      const exited = once(worker, 'exit');
      worker.kill();
      await within(5_000, 'the worker exit', exited);
    }
    (cluster as { settings: typeof cluster.settings }).settings = settings;
  });

  it("answers with the hosted method's value, on one object per key built from the first call's init", async () => {
    expect((await make([call('a', 'add', [1], { start: 10 })])).outcomes).to.deep.equal([{ value: 11 }]);
    // Same key: the same object, whatever init says now. Another key: another object.
    expect((await make([call('a', 'add', [2], { start: 999 }), call('b', 'add', [5], { start: 100 })])).outcomes).to.deep.equal([
      { value: 13 },
      { value: 105 },
    ]);
    expect(builds).to.deep.equal([{ start: 10 }, { start: 100 }]);
  });

  it('carries bigints both ways', async () => {
    expect((await make([call('a', 'double', [2n ** 70n])])).outcomes).to.deep.equal([{ value: 2n ** 71n }]);
  });

  it('sends the calls made in one turn as one message, and gets their answers back as one, in order', async () => {
    const report = await make([call('c', 'add', [1]), call('c', 'add', [2]), call('c', 'add', [3])]);
    expect(report.outcomes).to.deep.equal([{ value: 1 }, { value: 3 }, { value: 6 }]);
    expect(batches).to.deep.equal([3]);
    expect(report.replyMessages).to.equal(1);
  });

  it('sends calls made in separate turns as separate messages, even while earlier ones are unanswered', async () => {
    const report = await make([call('d', 'add', [1]), call('d', 'add', [2]), call('d', 'add', [3])], true);
    expect(report.outcomes).to.deep.equal([{ value: 1 }, { value: 3 }, { value: 6 }]);
    expect(batches).to.deep.equal([1, 1, 1]);
    expect(report.replyMessages).to.equal(3);
  });

  it('carries each failure back to its own call as an Error with the message, the others in the batch answered', async () => {
    const report = await make([
      call('e', 'fail'),
      call('e', 'add', [7]),
      call('e', 'failPlainly'),
      call('e', 'failLater'),
      { ...call('e', 'add', [1]), service: 'calls-test-nowhere' },
    ]);
    expect(report.outcomes).to.deep.equal([
      error('hosted failure'),
      { value: 7 },
      error('a plain string'),
      error('hosted async failure'),
      error('no service calls-test-nowhere'),
    ]);
    expect(batches).to.deep.equal([5]);
  });

  it('rejects a call the primary does not answer within 1 s with PRIMARY_TIMEOUT, and ignores the late answer', async () => {
    const started = Date.now();
    const report = await make([call('f', 'hold')]);
    expect(report.outcomes).to.deep.equal([error(`the primary did not answer ${SERVICE}.hold`, 'PRIMARY_TIMEOUT')]);
    expect(Date.now() - started).to.be.within(950, 3_000);
    expect(report.replyMessages).to.equal(0);
    // The late answer arrives, for a call nobody waits for any more: the next calls get their own.
    held.shift()!();
    expect((await make([call('f', 'add', [4]), call('f', 'add', [1])])).outcomes).to.deep.equal([{ value: 4 }, { value: 5 }]);
  });

  it('refuses at once outside a cluster worker', async () => {
    batches.length = 0;
    let refused: unknown;
    await callPrimary(SERVICE, 'a', { start: 0 }, 'add', [1]).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(Error).with.property('message', 'not a cluster worker');
    expect(batches).to.deep.equal([]);
  });
});
