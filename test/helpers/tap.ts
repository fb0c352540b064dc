/**
 * A recording tap between the ingress and a real EL: forwards every POST body unchanged to the
 * EL and keeps a copy, so tests can prove what the EL saw (and what it never saw).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

export interface Tap {
  readonly url: string;
  /** Bodies received, in arrival order. */
  readonly bodies: string[];
  methods(): string[];
  close(): Promise<void>;
}

export async function startTap(targetUrl: string): Promise<Tap> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      bodies.push(body);
      try {
        const reply = await request(targetUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(reply.statusCode, { 'content-type': 'application/json' });
        res.end(Buffer.from(await reply.body.arrayBuffer()));
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    methods: () => bodies.map((b) => (JSON.parse(b) as { method: string }).method),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
