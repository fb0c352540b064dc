/**
 * The reference the ingress is measured against (issue 6): the smallest Node JSON-RPC proxy
 * worth the name. It buffers the body, JSON.parses it, checks the method against a Set, forwards
 * through an undici Pool and pipes the answer back with .pipe(). No plugins, no limits.
 *
 * The benches run it as its own process, like the ingress: `startReferenceProcess(upstream)`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const ALLOWED = new Set(['eth_chainId', 'eth_blockNumber', 'eth_getBalance', 'eth_call', 'eth_getLogs']);

export async function startReferenceProxy(upstreamUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool(upstreamUrl, { connections: 128, pipelining: 1 });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      let method: unknown;
      try {
        method = (JSON.parse(body) as { method?: unknown }).method;
      } catch {
        method = undefined;
      }
      if (typeof method !== 'string' || !ALLOWED.has(method)) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found"}}');
        return;
      }
      pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
        (reply) => {
          res.writeHead(reply.statusCode, { 'content-type': 'application/json' });
          reply.body.pipe(res);
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}

/** This file run as a process: `node reference-proxy.js <upstream url>` prints its own URL. */
export async function startReferenceProcess(upstreamUrl: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), upstreamUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return {
    url: line.toString().trim(),
    child,
    stop: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reference = await startReferenceProxy(process.argv[2]!);
  process.stdout.write(`${reference.url}\n`);
}
