/**
 * A stub upstream speaking real HTTP JSON-RPC, for what no public EL implements (the chain's own
 * `svc_` methods and their error codes). Each method maps to the exact bytes of its answer.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubEl {
  readonly url: string;
  /** Requests received, parsed. */
  readonly received: Array<{ id: unknown; method: string; params: unknown }>;
  close(): Promise<void>;
}

/** `answers[method](id, params)` returns the full response body to send. */
export async function startStubEl(answers: Record<string, (id: unknown, params: unknown) => string>): Promise<StubEl> {
  const received: StubEl['received'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string; params: unknown };
      received.push(request);
      const answer = Object.hasOwn(answers, request.method)
        ? answers[request.method]!(request.id, request.params)
        : JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'stub: no such method' } });
      res.writeHead(200, { 'content-type': 'application/json', server: 'stub-el/1.0' }).end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
