/**
 * Issue 37, "behind a proxy": the nginx recipe of docs/operations.md (ops/nginx.conf, its TLS lines left out)
 * run with a real nginx in front of the ingress. With nginx among rate-limit's trusted_proxies,
 * two clients behind it have a bucket each; without, they share nginx's, and the ingress says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Pool } from 'undici';
import { freePort } from '../../support/ports.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';
import { scratchDir } from '../../support/scratch.js';

const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

/** nginx in the foreground, one process, running the recipe in front of `ingressUrl`. */
async function startNginx(ingressUrl: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const dir = scratchDir('svc-nginx');
  const port = await freePort();
  const recipe = readFileSync('ops/nginx.conf', 'utf8')
    .split('\n')
    .filter((line) => !line.trimEnd().endsWith('# tls'))
    .join('\n')
    .replace('server 127.0.0.1:8545;', `server ${new URL(ingressUrl).host};`)
    .replace('server {', `server {\n    listen 127.0.0.1:${port};`);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off; master_process off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 256; }
http { access_log off;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
${recipe}
}
`,
  );
  const child = spawn(NGINX, ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  // Bounded: nginx listens within a moment, or has said why not.
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    const up = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (i === 100) throw new Error('nginx did not listen within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

describe('behind nginx: the recipe of docs/operations.md in front of the ingress (issue 37)', () => {
  const anvil = useAnvil();
  const plugins = (trusted: string) => `
  - batch-refuse
  - size-limit
  - allowlist
  - rate-limit:
      ${trusted}
      reads: {per_source: {rate_per_second: 1, burst: 3}}`;

  /** One client at its own address, through nginx. */
  const client = (url: string, address: string) => {
    const pool = new Pool(url, { connections: 1, localAddress: address });
    const ask = async () => {
      const reply = await pool.request({
        path: '/',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
      return { status: reply.statusCode, retryAfter: reply.headers['retry-after'], body: await reply.body.text() };
    };
    return { ask, close: () => pool.close() };
  };

  const behindNginx = async (trusted: string, run: (nginx: string, ingress: TestIngress) => Promise<void>) => {
    const ingress = await startTestIngress(testConfig(anvil.current.url, plugins(trusted)).replace('log_level: debug', 'log_level: info'));
    const nginx = await startNginx(ingress.url);
    try {
      await run(nginx.url, ingress);
    } finally {
      await nginx.stop();
      await ingress.shutdown();
    }
  };

  it('with nginx in trusted_proxies, two clients behind it have a bucket each', async () => {
    await behindNginx('trusted_proxies: [127.0.0.1]', async (url, ingress) => {
      const [first, second] = [client(url, '127.0.0.2'), client(url, '127.0.0.3')];
      try {
        const answers = [];
        for (let i = 0; i < 4; i++) answers.push(await first.ask());
        expect(answers.slice(0, 3).map((a) => a.body)).to.deep.equal(Array(3).fill('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}'));
        expect(answers[3]).to.include({ status: 429, retryAfter: '1' });
        expect(JSON.parse(answers[3]!.body).error.code).to.equal(-32005);
        expect(await second.ask(), 'the other client').to.include({ status: 200, body: '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}' });
        expect(
          ingress.logs.filter((line) => line.includes('forwarding headers')),
          'nothing to warn of',
        ).to.deep.equal([]);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });
  });

  it("without, they share nginx's bucket, and the ingress warns once that it ignores X-Forwarded-For", async () => {
    await behindNginx('trusted_proxies: []', async (url, ingress) => {
      const [first, second] = [client(url, '127.0.0.2'), client(url, '127.0.0.3')];
      try {
        for (let i = 0; i < 3; i++) expect((await first.ask()).status).to.equal(200);
        expect((await second.ask()).status, 'the other client, refused').to.equal(429);
        const warnings = ingress.logs
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((entry) => String(entry.msg).includes('forwarding headers'));
        expect(warnings.map(({ level, peer }) => ({ level, peer }))).to.deep.equal([{ level: 'warn', peer: '127.0.0.1' }]);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });
  });
});
