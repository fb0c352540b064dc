/**
 * The reference the ingress is measured against (issue 6): the smallest Node JSON-RPC proxy
 * worth the name. It buffers the body, JSON.parses it, checks the method against a Set, forwards
 * through an undici Pool and pipes the answer back with .pipe(). No plugins, no limits.
 *
 * The benches run it as its own process, like the ingress: `startReferenceProcess(upstream)`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const ALLOWED = new Set(['eth_chainId', 'eth_blockNumber', 'eth_getBalance', 'eth_call', 'eth_getLogs']);
const JSON_HEADERS = { 'content-type': 'application/json' };

/** What a minimal proxy does with an allowed request: send `body` upstream and answer `res`. */
export type Forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/** The minimal proxy's front (bench:forwarders swaps what forwards): body buffered, parsed, method checked. */
export function minimalProxy(forward: Forward): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let method: unknown;
      try {
        method = (JSON.parse(body.toString()) as { method?: unknown }).method;
      } catch {
        method = undefined;
      }
      if (typeof method !== 'string' || !ALLOWED.has(method)) {
        res.writeHead(200, JSON_HEADERS).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found"}}');
        return;
      }
      forward(req, res, body);
    });
  });
}

/** The reference's forwarding: undici `Pool.request()`, the answer `.pipe()`d back. */
export function requestPipe(pool: Pool): Forward {
  return (_req, res, body) =>
    void pool.request({ path: '/', method: 'POST', headers: JSON_HEADERS, body }).then(
      (reply) => {
        res.writeHead(reply.statusCode, JSON_HEADERS);
        reply.body.pipe(res);
      },
      () => res.writeHead(502).end(),
    );
}

export async function startReferenceProxy(upstreamUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool(upstreamUrl, { connections: 128, pipelining: 1 });
  const server = minimalProxy(requestPipe(pool));
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
