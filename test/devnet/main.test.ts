/** `npm start`'s program as a newcomer runs it: it says where it is, answers, and Ctrl-C stops it all. */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rpc } from '../../support/http.js';

describe('npm start (devnet/main.js)', () => {
  it('prints the URL when ready, serves chain 8141 there, and stops everything on Ctrl-C', async function () {
    this.timeout(30_000);
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', METRICS_PORT: '0' };
    delete env.SVC_OPERATOR_TOKEN;
    const child = spawn(process.execPath, ['dist/devnet/main.js'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr!.resume();
    const ready = new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /ready at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`devnet exited with ${code}: ${out}`)));
    });
    const url = await ready;
    expect((await rpc(url, 'eth_chainId')).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
    // No token was given: the generated one is printed, and it opens svc_nodeHealth.
    const token = /operator token \(svc_nodeHealth, Authorization: Bearer\): ([0-9a-f]{48})\n/.exec(out)?.[1];
    expect(token, out).to.be.a('string');
    const health = JSON.parse((await rpc(url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${token}` })).text);
    expect(health.result.dataDirDisk.totalBytes).to.be.above(0);
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).to.equal(0);
    expect(out).to.include('stopping devnet');
    // anvil went with it: its port no longer answers.
    const anvilUrl = /anvil at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(anvilUrl, 'the EL URL is printed').to.be.a('string');
    const gone = await rpc(anvilUrl!, 'eth_chainId').then(
      () => 'answered',
      (err: Error & { code?: string }) => err.code ?? err.message,
    );
    expect(gone).to.equal('ECONNREFUSED');
  });
});
