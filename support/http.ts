/** Raw HTTP for tests: exact bytes in, exact bytes out, on 127.0.0.1 only. */
import { request as httpRequest } from 'node:http';
import { request } from 'undici';

export interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

export async function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<RawReply> {
  const reply = await request(url, { method: 'POST', headers, body });
  return { status: reply.statusCode, headers: reply.headers, text: await reply.body.text() };
}

/**
 * One JSON POST on a connection of its own from `localAddress` (any 127.x.y.z: each a source of
 * its own; with node:cluster, each connection goes to the next worker), its answer parsed.
 */
// biome-ignore lint/suspicious/noExplicitAny: the answers read are of several shapes; each test reads the members it expects.
export function postFresh(url: string, body: string, localAddress = '127.0.0.1'): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, localAddress, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs one JSON-RPC call and returns the raw reply. */
export function rpc(url: string, method: string, params: unknown[] = [], id: unknown = 1, headers?: Record<string, string>) {
  return post(url, JSON.stringify({ jsonrpc: '2.0', id, method, params }), {
    'content-type': 'application/json',
    ...headers,
  });
}

/** POSTs one JSON-RPC call and returns its parsed result, failing on an error answer. */
export async function call<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const reply = await rpc(url, method, params);
  const parsed = JSON.parse(reply.text) as { result?: T; error?: { message: string } };
  if (parsed.error) throw new Error(`${method}: ${parsed.error.message}`);
  return parsed.result as T;
}

/**
 * The receipt of `hash`, once mined. anvil (like any EL over HTTP) has no push, so this polls,
 * bounded: it fails after `timeoutMs`.
 */
export async function receiptOf<T = { transactionHash: string; status: string; blockNumber: string }>(
  url: string,
  hash: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const receipt = await call<T | null>(url, 'eth_getTransactionReceipt', [hash]);
    if (receipt !== null) return receipt;
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
