/**
 * Forwarding libraries, measured: the same minimal Node proxy (buffer the body, JSON.parse it,
 * check the method in a Set) forwarding to anvil four ways, each as its own process:
 *
 * - `http-proxy`: http-proxy 1.18 (the design's name for it) through a keep-alive agent, the
 *   buffered body replayed with its `buffer` option;
 * - `request-pipe`: undici `Pool.request()`, the answer `.pipe()`d back (bench:reads' reference,
 *   whose front, bench/reference-proxy.ts, all four share);
 * - `stream`: undici `Pool.stream()`, the factory returning the client's response;
 * - `dispatch`: undici `Pool.dispatch()` with the ingress's own handler (src/answer-stream.ts),
 *   what the ingress forwards with.
 *
 * Each round measures every proxy once, in a rotating order, on the proxy core (bench/cores.ts),
 * wrk and anvil on the other; medians of req/s and of the proxy's CPU per call, as ratios
 * against `request-pipe`.
 *
 *   npm run bench:forwarders [-- seconds rounds]   needs wrk (Debian: apt-get install wrk)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import httpProxy from 'http-proxy';
import { Pool } from 'undici';
import { AnswerStream } from '../src/answer-stream.js';
import { startAnvil } from '../devnet/anvil.js';
import { canPin, LOAD_CPU, pin, PROXY_CPU } from './cores.js';
import { median, rotated } from './measure.js';
import { minimalProxy, requestPipe, type Forward } from './reference-proxy.js';
import { runBench } from './production.js';
import { wrk, type Run } from './wrk.js';

const KINDS = ['http-proxy', 'request-pipe', 'stream', 'dispatch'] as const;
type Kind = (typeof KINDS)[number];
const REFERENCE: Kind = 'request-pipe';
const CONNECTIONS = 128;
const JSON_HEADERS = { 'content-type': 'application/json' };

function forwarder(kind: Kind, upstream: string): Forward {
  if (kind === 'http-proxy') {
    const proxy = httpProxy.createProxyServer({ target: upstream, agent: new Agent({ keepAlive: true, maxSockets: CONNECTIONS }) });
    proxy.on('error', (_err, _req, res) => void (res as ServerResponse).writeHead(502).end());
    return (req, res, body) => proxy.web(req, res, { buffer: Readable.from([body]) });
  }
  const pool = new Pool(upstream, { connections: CONNECTIONS, pipelining: 1 });
  if (kind === 'request-pipe') return requestPipe(pool);
  const options = (body: Buffer) => ({ path: '/', method: 'POST' as const, headers: JSON_HEADERS, body });
  if (kind === 'stream') {
    return (_req, res, body) =>
      void pool
        .stream(options(body), ({ statusCode }) => {
          res.writeHead(statusCode, JSON_HEADERS);
          return res;
        })
        .catch(() => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
  }
  return (_req, res, body) =>
    pool.dispatch(
      options(body),
      new AnswerStream(res, (err) => {
        if (err !== undefined) res.headersSent ? res.destroy() : res.writeHead(502).end();
      }),
    );
}

/** This file run as a process: `node forwarders.js <kind> <upstream url>` prints its own URL. */
function serve(kind: Kind, upstream: string): void {
  const server = minimalProxy(forwarder(kind, upstream));
  server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
}

async function startForwarder(kind: Kind, upstream: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), kind, upstream], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: line.toString().trim(), child };
}

async function main(stopLater: (stop: () => unknown) => void): Promise<void> {
  const seconds = Number(process.argv[2] ?? 2);
  const rounds = Number(process.argv[3] ?? 5);
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const proxies = new Map<Kind, { url: string; child: ChildProcess }>();
  for (const kind of KINDS) {
    const proxy = await startForwarder(kind, anvil.url);
    stopLater(() => proxy.child.kill('SIGTERM'));
    proxies.set(kind, proxy);
  }
  const pinned = canPin();
  if (pinned) {
    pin(anvil.child.pid!, LOAD_CPU);
    for (const { child } of proxies.values()) pin(child.pid!, PROXY_CPU);
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
  const answer = async (url: string) => (await fetch(url, { method: 'POST', headers: JSON_HEADERS, body })).text();
  const direct = await answer(anvil.url);
  for (const [kind, { url }] of proxies) {
    const through = await answer(url);
    if (through !== direct) throw new Error(`${kind} answered ${through}, anvil ${direct}`);
  }
  console.log(
    `forwarders: eth_chainId to anvil, wrk -t1, ${rounds} rounds of ${seconds} s, ${new Date().toISOString()}, node ${process.version}`,
  );
  console.log(pinned ? `pinned: each proxy on core ${PROXY_CPU}, wrk and anvil on core ${LOAD_CPU}` : 'not pinned');
  for (const clients of [32, 256]) {
    const runs = new Map<Kind, Run[]>(KINDS.map((kind) => [kind, []]));
    for (let round = 0; round < rounds; round++) {
      for (const kind of rotated(KINDS, round)) {
        const { url, child } = proxies.get(kind)!;
        runs.get(kind)!.push(await wrk(url, body, clients, seconds, { cpuPid: child.pid!, cpu: pinned ? LOAD_CPU : undefined }));
      }
    }
    const rps = (kind: Kind) => median(runs.get(kind)!.map((r) => r.rps));
    const cpu = (kind: Kind) => median(runs.get(kind)!.map((r) => r.cpuUsPerCall!));
    const p99 = (kind: Kind) => median(runs.get(kind)!.map((r) => r.p99));
    console.log(`\n${clients} clients       req/s   % of ${REFERENCE}   CPU µs per call   % of ${REFERENCE}'s   p99 ms`);
    for (const kind of KINDS) {
      console.log(
        `  ${kind.padEnd(14)} ${Math.round(rps(kind)).toString().padStart(7)}   ${`${((rps(kind) / rps(REFERENCE)) * 100).toFixed(0)}%`.padStart(8)}` +
          `   ${cpu(kind).toFixed(1).padStart(15)}   ${`${((cpu(kind) / cpu(REFERENCE)) * 100).toFixed(0)}%`.padStart(10)}   ${p99(kind).toFixed(2).padStart(6)}`,
      );
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2] as Kind;
  if (KINDS.includes(kind)) serve(kind, process.argv[3]!);
  else runBench(main);
}
