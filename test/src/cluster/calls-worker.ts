/**
 * A cluster worker for test/src/cluster/calls.test.ts (forked through `cluster.setupPrimary`'s
 * `exec`): it makes the calls to the primary it is told to, in one turn of its event loop or one
 * per turn, and reports each outcome and how many reply messages came back meanwhile.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { callPrimary } from '../../../src/cluster/calls.js';

export interface CallSpec {
  readonly service: string;
  readonly key: string;
  readonly init: unknown;
  readonly method: string;
  readonly args: unknown[];
}

/** From the test: make `calls`, all in one turn, or each in a turn of its own. */
export interface Command {
  readonly channel: 'calls-test:do';
  readonly calls: readonly CallSpec[];
  readonly oneTurnEach: boolean;
}

export type Outcome =
  | { readonly value: unknown }
  | { readonly error: { readonly name: string; readonly message: string; readonly code: unknown } };

/** To the test: the outcome of each call, in order, and the reply messages received for them. */
export interface Report {
  readonly channel: 'calls-test:done';
  readonly outcomes: Outcome[];
  readonly replyMessages: number;
}

let replyMessages = 0;
process.on('message', (message: unknown) => {
  if ((message as { channel?: unknown } | null)?.channel === 'svc-ingress:call') replyMessages++;
});

process.on('message', (message: unknown) => {
  const command = message as Command | null;
  if (command?.channel !== 'calls-test:do') return;
  void run(command);
});

// Told once both listeners are on: a message sent before would be lost.
process.send!({ channel: 'calls-test:ready' });

async function run({ calls, oneTurnEach }: Command): Promise<void> {
  replyMessages = 0;
  const pending: Promise<Outcome>[] = [];
  for (const call of calls) {
    if (oneTurnEach && pending.length > 0) await nextTurn();
    pending.push(
      callPrimary(call.service, call.key, call.init, call.method, call.args).then(
        (value) => ({ value }),
        (err: Error & { code?: unknown }) => ({ error: { name: err.name, message: err.message, code: err.code } }),
      ),
    );
  }
  const outcomes = await Promise.all(pending);
  process.send!({ channel: 'calls-test:done', outcomes, replyMessages } satisfies Report);
}
