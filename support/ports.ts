import { once } from 'node:events';
import { createServer } from 'node:net';

/** A loopback port that was free a moment ago (for servers that cannot listen on port 0). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
