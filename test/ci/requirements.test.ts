/**
 * .ci/requirements, which the README's test command runs first: with every Debian tool the tests
 * use present it returns at once; with them missing and no way to install them (not root, no
 * apt-get) it stops within seconds with one line naming the packages and the command that
 * installs them.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';

const run = (env: NodeJS.ProcessEnv) => spawnSync('/bin/bash', ['.ci/requirements'], { env, encoding: 'utf8', timeout: 10_000 });

describe('.ci/requirements: the Debian tools the tests use', () => {
  it('returns at once when redis-server, promtool and systemd-analyze are there', () => {
    const answer = run(process.env);
    expect([answer.status, answer.stdout, answer.stderr]).to.deep.equal([0, '', '']);
  });

  it('names the missing packages and how to install them in one line, when it cannot install them itself', () => {
    // No PATH: none of the tools, no apt-get, no `id`.
    const answer = run({ PATH: '/nonexistent' });
    expect([answer.status, answer.stdout, answer.stderr]).to.deep.equal([
      1,
      '',
      'npm test needs the Debian packages systemd redis-server prometheus: sudo apt-get install -y --no-install-recommends systemd redis-server prometheus\n',
    ]);
  });
});
