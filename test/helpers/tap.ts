/**
 * A recording tap between the ingress and a real EL: forwards every POST body unchanged to the
 * EL and keeps a copy, so tests can prove what the EL saw (and what it never saw).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { Anvil } from '../../devnet/anvil.js';
import { useAnvil } from './el.js';
import { startTestIngress, testConfig, type TestIngress } from './ingress.js';

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

/**
 * For a suite: a real anvil, a tap in front of it, and the production ingress in front of the
 * tap (`plugins` replaces the chain). The tap is emptied before each test.
 */
export function useTappedIngress(plugins?: string): { readonly anvil: Anvil; readonly tap: Tap; readonly ingress: TestIngress } {
  const el = useAnvil();
  const suite = {} as { anvil: Anvil; tap: Tap; ingress: TestIngress };
  before(async () => {
    suite.anvil = el.current;
    suite.tap = await startTap(el.current.url);
    suite.ingress = await startTestIngress(testConfig(suite.tap.url, plugins));
  });
  after(async () => {
    await suite.ingress?.shutdown();
    await suite.tap?.close();
  });
  beforeEach(() => {
    suite.tap.bodies.length = 0;
  });
  return suite;
}
