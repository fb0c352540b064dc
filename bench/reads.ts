/**
 * Read throughput: req/s and p50/p99 for eth_chainId, eth_blockNumber, eth_getBalance and
 * eth_call at 1, 32 and 256 keep-alive clients (wrk, one thread), through the svc-ingress process
 * with the shipped production chain (rate limits raised), printed as ratios against the
 * reference Node proxy (its own process too), nginx proxy_pass with upstream keep-alive, and
 * anvil direct, all measured in this run.
 *
 *   npm run bench:reads [-- seconds]        needs wrk and nginx (Debian: apt-get install wrk nginx)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnvil } from '../devnet/anvil.js';
import { freePort } from '../test/helpers/ports.js';
import { startIngressProcess } from '../test/helpers/child.js';
import { productionChain, runBench, UNLIMITED_READS } from './production.js';
import { startReferenceProcess } from './reference-proxy.js';
import { wrk, type Run } from './wrk.js';

const SECONDS = Number(process.argv[2] ?? 3);
const CLIENTS = [1, 32, 256];
const DEV = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const METHODS: Record<string, unknown[]> = {
  eth_chainId: [],
  eth_blockNumber: [],
  eth_getBalance: [DEV, 'latest'],
  eth_call: [{ to: DEV, data: '0x' }, 'latest'],
};

async function startNginx(upstream: string, dir: string): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 4096; }
http { access_log off;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream el { server ${upstream.replace('http://', '')}; keepalive 128; }
  server { listen 127.0.0.1:${port};
    location / { proxy_pass http://el; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', dir, '-g', 'daemon off;'], { stdio: 'ignore' });
  // Bounded wait for the port to answer.
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const anvil = await startAnvil();
  const reference = await startReferenceProcess(anvil.url);
  const nginx = await startNginx(anvil.url, dir);
  const ingress = await startIngressProcess(productionChain(anvil.url, [UNLIMITED_READS]));
  const targets: Record<string, string> = { direct: anvil.url, nginx: nginx.url, reference: reference.url, ingress: ingress.url };
  console.log(`reads: wrk -t1, ${SECONDS} s per run, ${new Date().toISOString()}, node ${process.version}`);
  console.log('method            clients   ingress req/s  p50 ms  p99 ms | /reference  /nginx  /direct | ref p99 ms');
  try {
    for (const [method, params] of Object.entries(METHODS)) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
      for (const clients of CLIENTS) {
        const runs: Record<string, Run> = {};
        for (const [name, url] of Object.entries(targets)) runs[name] = await wrk(url, body, clients, SECONDS);
        const i = runs.ingress!;
        const pct = (other: Run) => `${((i.rps / other.rps) * 100).toFixed(0)}%`.padStart(9);
        console.log(
          `${method.padEnd(18)}${String(clients).padStart(7)}   ${Math.round(i.rps).toString().padStart(13)} ${i.p50.toFixed(2).padStart(7)} ${i.p99.toFixed(2).padStart(7)} |` +
            `${pct(runs.reference!)}${pct(runs.nginx!)}${pct(runs.direct!)} | ${runs.reference!.p99.toFixed(2).padStart(9)}`,
        );
      }
    }
  } finally {
    ingress.child.kill('SIGTERM');
    await ingress.exited;
    nginx.stop();
    await reference.stop();
    await anvil.stop();
  }
}

runBench(main);
