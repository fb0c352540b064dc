/**
 * A load generator in a process of its own (so that its CPU does not share the measuring test's
 * event loop): `FLOOD_CONNECTIONS` connections from `FLOOD_FROM` POST bodies of `FLOOD_BYTES` to
 * `FLOOD_URL` for `FLOOD_MS`, as `FLOOD_CONTENT_TYPE` (application/json unless set: another type
 * makes a reference flood that costs this process the same and the ingress nothing but a 415). Prints "flooding" once started, then the answers by status (or
 * error code) as one JSON line, and exits.
 */
import { Pool } from 'undici';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const url = env('FLOOD_URL');
const connections = Number(env('FLOOD_CONNECTIONS'));
const bytes = Number(env('FLOOD_BYTES'));
const until = Date.now() + Number(env('FLOOD_MS'));
const pool = new Pool(url, { connections, localAddress: env('FLOOD_FROM') });
const contentType = process.env.FLOOD_CONTENT_TYPE ?? 'application/json';
const prefix = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["';
const body = Buffer.from(`${prefix}${'a'.repeat(Math.max(0, bytes - prefix.length - 4))}"]}`);
const outcomes: Record<string, number> = {};
const count = (key: string) => (outcomes[key] = (outcomes[key] ?? 0) + 1);

process.stdout.write('flooding\n');
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (Date.now() < until) {
      try {
        const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': contentType }, body });
        await reply.body.dump();
        count(String(reply.statusCode));
      } catch (err) {
        // Refused unread: the connection closes under the body being written.
        count((err as NodeJS.ErrnoException).code ?? 'error');
      }
    }
  }),
);
await pool.close();
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
