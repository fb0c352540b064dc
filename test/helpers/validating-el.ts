/**
 * A stub of what no public EL implements, in front of a real anvil: `svc_validateTransaction`
 * (the chain's validation, where frame transactions are simulated) and acceptance of type 0x06
 * submissions. Every other call goes to anvil unchanged. Speaks real HTTP.
 */
import { keccak256 } from 'ethers';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

export type Validation = { result: unknown } | { error: { code: number; message: string } };

export interface ValidatingEl {
  readonly url: string;
  /** Raw frame transactions accepted by eth_sendRawTransaction. */
  readonly submittedFrames: string[];
  /** Raw transactions passed to svc_validateTransaction. */
  readonly validated: string[];
  /** Every raw transaction submitted through it (frame or not). */
  readonly submitted: string[];
  close(): Promise<void>;
}

export async function startValidatingEl(anvilUrl: string, validate: (raw: string) => Validation): Promise<ValidatingEl> {
  const submittedFrames: string[] = [];
  const validated: string[] = [];
  const submitted: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      const call = JSON.parse(body) as { id: unknown; method: string; params: string[] };
      const reply = (answer: object) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...answer }));
      if (call.method === 'svc_validateTransaction') {
        validated.push(call.params[0]!);
        return reply(validate(call.params[0]!));
      }
      if (call.method === 'eth_sendRawTransaction') submitted.push(call.params[0]!);
      if (call.method === 'eth_sendRawTransaction' && call.params[0]!.startsWith('0x06')) {
        submittedFrames.push(call.params[0]!);
        return reply({ result: keccak256(call.params[0]!) });
      }
      const upstream = await request(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(upstream.statusCode, { 'content-type': 'application/json' }).end(Buffer.from(await upstream.body.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    submittedFrames,
    validated,
    submitted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
