import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { scratchDir } from '../support/scratch.js';

const UNIT = 'systemd/svc-ingress.service';
const text = readFileSync(UNIT, 'utf8');
const directives = (key: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));

describe('systemd unit', () => {
  it('runs after the execution client, restarts on failure, reloads by SIGHUP', () => {
    expect(directives('After')[0]).to.include('reth.service').and.include('geth.service');
    expect(directives('Restart')).to.deep.equal(['on-failure']);
    expect(directives('ExecReload')).to.deep.equal(['/bin/kill -HUP $MAINPID']);
    expect(directives('KillSignal')).to.deep.equal(['SIGTERM']);
    expect(directives('KillMode')).to.deep.equal(['mixed']);
    expect(directives('ExecStart')).to.deep.equal(['/usr/local/bin/svc-ingress --config /etc/svc-ingress/ingress.yaml']);
  });

  it('runs unprivileged and sandboxed', () => {
    expect(directives('User')).to.deep.equal(['svc-ingress']);
    for (const [key, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['CapabilityBoundingSet', ''],
      ['RestrictAddressFamilies', 'AF_INET AF_INET6 AF_UNIX'],
      ['SystemCallFilter', '@system-service'],
    ]) {
      expect(directives(key!), key).to.deep.equal([value]);
    }
  });

  it('passes systemd-analyze verify (with ExecStart pointed at this checkout)', async function () {
    this.timeout(20_000);
    const analyze = await promisify(execFile)('which', ['systemd-analyze']).then(
      (r) => r.stdout.trim(),
      () => '',
    );
    // The test command installs systemd (.ci/requirements); a machine without it still gets the checks above.
    if (analyze === '') return console.log('      (systemd-analyze not installed: verify not run)');
    const dir = scratchDir('svc-unit');
    const local = text.replace('/usr/local/bin/svc-ingress', `${process.execPath} ${resolve('dist/src/cli.js')}`);
    writeFileSync(join(dir, 'svc-ingress.service'), local);
    const { stderr } = await promisify(execFile)(analyze, ['verify', join(dir, 'svc-ingress.service')]);
    expect(stderr.trim()).to.equal('');
  });
});
