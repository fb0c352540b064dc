/**
 * The run's deadline (test/helpers/run-timeout.ts): a mocha run whose test never settles ends at
 * the deadline, exit code 1, with one line naming the test it was in.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../../support/scratch.js';

describe('the test run: one deadline for all of it', () => {
  it('ends a run hung in a test at the deadline, naming the test', () => {
    const dir = scratchDir('svc-run-timeout');
    const spec = join(dir, 'hangs.test.mjs');
    writeFileSync(spec, "describe('a suite', () => { it('never settles', () => new Promise(() => {})); });\n");
    const started = Date.now();
    const run = spawnSync(
      process.execPath,
      ['node_modules/mocha/bin/mocha.js', '--no-config', '--timeout', '0', '--require', 'dist/test/helpers/run-timeout.js', spec],
      { env: { ...process.env, SVC_TEST_RUN_TIMEOUT_MS: '1000' }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(run.status).to.equal(1);
    expect(run.stderr).to.equal('the test run passed its 1000 ms deadline; it was in: a suite never settles\n');
    expect(Date.now() - started).to.be.below(15_000);
  });
});
