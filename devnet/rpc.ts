/** A small JSON-RPC client for the devnet's own parts (anvil, the stand-ins): one call per request. */
import { request } from 'undici';

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

// biome-ignore lint/suspicious/noExplicitAny: JSON-RPC results are shaped by the method; callers read the fields they asked for.
export type Rpc = (method: string, params?: readonly unknown[]) => Promise<any>;

/** Calls `method` at `url`: its result, or an RpcError with the answer's code and message. */
export function rpcClient(url: string): Rpc {
  return async (method, params = []) => {
    const reply = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const answer = (await reply.body.json()) as { result?: unknown; error?: { code: number; message: string } };
    if (answer.error !== undefined) throw new RpcError(answer.error.code, answer.error.message);
    return answer.result;
  };
}
