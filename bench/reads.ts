/**
 * Read throughput: req/s and p50/p99 for eth_chainId, eth_blockNumber, eth_getBalance and
 * eth_call at 1, 32 and 256 keep-alive clients (wrk, one thread), through the ingress with the
 * shipped production chain (rate limits raised), printed as ratios against the reference Node
 * proxy, nginx proxy_pass with upstream keep-alive, and anvil direct, all measured in this run.
 *
 *   npm run bench:reads [-- seconds]        needs wrk and nginx (Debian: apt-get install wrk nginx)
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startAnvil } from '../devnet/anvil.js';
import { parseConfig } from '../src/config/load.js';
import { startIngress } from '../src/ingress.js';
import { createLogger } from '../src/log.js';
import { freePort } from '../test/helpers/ports.js';
import { startReferenceProxy } from './reference-proxy.js';

const SECONDS = Number(process.argv[2] ?? 3);
const CLIENTS = [1, 32, 256];
const DEV = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const METHODS: Record<string, unknown[]> = {
  eth_chainId: [],
  eth_blockNumber: [],
  eth_getBalance: [DEV, 'latest'],
  eth_call: [{ to: DEV, data: '0x' }, 'latest'],
};

interface Run {
  rps: number;
  p50: number;
  p99: number;
}

/** wrk's durations: 95.2us, 1.20ms, 2.01s, 1.00m. */
function ms(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!match) throw new Error(`unreadable wrk duration ${text}`);
  const value = Number(match[1]);
  return value * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as 'us' | 'ms' | 's' | 'm'];
}

async function wrk(url: string, body: string, clients: number, dir: string): Promise<Run> {
  const script = join(dir, 'post.lua');
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n`);
  // A one-second warm-up per target first: connection set-up (clients and upstream pools, which
  // idle out between runs) and JIT warm-up otherwise land in the measured tail.
  await promisify(execFile)('wrk', ['-t1', `-c${clients}`, '-d1s', '-s', script, url]);
  const { stdout } = await promisify(execFile)('wrk', ['-t1', `-c${clients}`, `-d${SECONDS}s`, '--latency', '-s', script, url]);
  if (!/50%/.test(stdout) || /Non-2xx|Socket errors/.test(stdout)) throw new Error(`wrk against ${url} failed:\n${stdout}`);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)![1]),
    p50: ms(/^\s+50%\s+(\S+)/m.exec(stdout)![1]!),
    p99: ms(/^\s+99%\s+(\S+)/m.exec(stdout)![1]!),
  };
}

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

function productionChain(elUrl: string): string {
  process.env.SVC_BENCH_TOKEN = 'bench-operator-token-0123456789';
  return readFileSync('config/ingress.yaml', 'utf8')
    .replace('listen: 127.0.0.1:8545', 'listen: 127.0.0.1:0')
    .replace('metrics_listen: 127.0.0.1:9100', 'metrics_listen: 127.0.0.1:0')
    .replace('execution: http://127.0.0.1:18545', `execution: ${elUrl}`)
    .replace('log_level: info', 'log_level: warn')
    .replace('token_file: /etc/svc-ingress/operator-token', 'token_env: SVC_BENCH_TOKEN')
    .replace('per_source: {rate_per_second: 300, burst: 600}', 'per_source: {rate_per_second: 10000000, burst: 10000000}');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const anvil = await startAnvil();
  const reference = await startReferenceProxy(anvil.url);
  const nginx = await startNginx(anvil.url, dir);
  const ingress = await startIngress(parseConfig(productionChain(anvil.url)), createLogger('warn'));
  const targets: Record<string, string> = { direct: anvil.url, nginx: nginx.url, reference: reference.url, ingress: ingress.url };
  console.log(`reads: wrk -t1, ${SECONDS} s per run, ${new Date().toISOString()}, node ${process.version}`);
  console.log('method            clients   ingress req/s  p50 ms  p99 ms | /reference  /nginx  /direct | ref p99 ms');
  try {
    for (const [method, params] of Object.entries(METHODS)) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
      for (const clients of CLIENTS) {
        const runs: Record<string, Run> = {};
        for (const [name, url] of Object.entries(targets)) runs[name] = await wrk(url, body, clients, dir);
        const i = runs.ingress!;
        const pct = (other: Run) => `${((i.rps / other.rps) * 100).toFixed(0)}%`.padStart(9);
        console.log(
          `${method.padEnd(18)}${String(clients).padStart(7)}   ${Math.round(i.rps).toString().padStart(13)} ${i.p50.toFixed(2).padStart(7)} ${i.p99.toFixed(2).padStart(7)} |` +
            `${pct(runs.reference!)}${pct(runs.nginx!)}${pct(runs.direct!)} | ${runs.reference!.p99.toFixed(2).padStart(9)}`,
        );
      }
    }
  } finally {
    await ingress.shutdown();
    nginx.stop();
    await reference.close();
    await anvil.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
