/** `npm start`'s program as a newcomer runs it: it says where it is, answers, and Ctrl-C stops it all. */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rpc } from '../helpers/http.js';

describe('npm start (devnet/main.js)', () => {
  it('prints the URL when ready, serves chain 8141 there, and stops everything on Ctrl-C', async function () {
    this.timeout(30_000);
    const child = spawn(process.execPath, ['dist/devnet/main.js'], {
      env: { ...process.env, PORT: '0', METRICS_PORT: '0' },
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
