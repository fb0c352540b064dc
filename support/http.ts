/** Raw HTTP for tests: exact bytes in, exact bytes out, on 127.0.0.1 only. */
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
