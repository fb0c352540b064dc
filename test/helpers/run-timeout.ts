/**
 * A deadline for the whole mocha run (loaded by .mocharc's `require`): past it, the run ends with
 * one line naming the test it was in, instead of hanging until CI's own limit. Each test has
 * mocha's own timeout; this catches what those cannot (a hook or handle that never settles).
 * SVC_TEST_RUN_TIMEOUT_MS sets it (default 15 minutes: the whole suite takes ~4).
 */
const RUN_TIMEOUT_MS = Number(process.env.SVC_TEST_RUN_TIMEOUT_MS ?? 15 * 60_000);

let current = 'no test yet';
const deadline = setTimeout(() => {
  process.stderr.write(`the test run passed its ${RUN_TIMEOUT_MS} ms deadline; it was in: ${current}\n`);
  process.exit(1);
}, RUN_TIMEOUT_MS);
// The deadline alone never keeps a finished run alive.
deadline.unref();

export const mochaHooks = {
  beforeEach(this: Mocha.Context) {
    current = this.currentTest?.fullTitle() ?? current;
  },
};
