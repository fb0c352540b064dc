/**
 * Scale: the svc-ingress process's RSS with 10,000 idle keep-alive client connections (each has
 * made one eth_chainId call and stays open), with the shipped production chain (`max_connections`,
 * `max_connections_per_source` and `keep_alive_ms` raised to hold them), beside anvil's own RSS
 * growth for the same 10,000 connections made to it directly, in the same run. Then the latency
 * of a fresh call while all of them are open.
 *
 *   npm run bench:idle [-- connections]        (needs `ulimit -n` above 2 × connections)
 */
import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { startAnvil } from '../devnet/anvil.js';
import { memoryOf } from '../support/log-bomb.js';
import { within } from '../support/within.js';
import { benchIngress, productionChain, runBench, UNLIMITED_READS, type StopLater } from './production.js';

const CONNECTIONS = Number(process.argv[2] ?? 10_000);
const BATCH = 500;
const BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const REQUEST = `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`;

/** One keep-alive connection that has had one answer; resolves once the answer arrived. */
function idleConnection(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(REQUEST));
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (!seen.includes('"result":"0x1fcd"')) return;
      socket.off('data', onData);
      resolve(socket);
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`connection closed before its answer: ${seen.slice(0, 80)}`)));
  });
}

async function openIdle(url: string): Promise<Socket[]> {
  const port = Number(new URL(url).port);
  const sockets: Socket[] = [];
  for (let i = 0; i < CONNECTIONS; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, CONNECTIONS - i) }, () => idleConnection(port));
    sockets.push(...(await within(60_000, `${BATCH} connections answered`, Promise.all(batch))));
  }
  return sockets;
}

async function closeAll(sockets: Socket[]): Promise<void> {
  for (const socket of sockets) {
    socket.removeAllListeners('close');
    socket.destroy();
  }
}

const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;

/** RSS before and with the connections open, and KiB per connection. */
async function measure(name: string, url: string, pid: number): Promise<Socket[]> {
  const before = memoryOf(pid).rssKiB;
  const sockets = await openIdle(url);
  // Memory the process takes for the connections may lag their answers: the highest of a
  // second's readings.
  let after = 0;
  for (let i = 0; i < 10; i++) {
    after = Math.max(after, memoryOf(pid).rssKiB);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  console.log(
    `${name.padEnd(10)} RSS ${mib(before).padStart(10)} -> ${mib(after).padStart(10)} with ${CONNECTIONS} idle connections: ` +
      `${((after - before) / CONNECTIONS).toFixed(1)} KiB each`,
  );
  return sockets;
}

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const ingress = await benchIngress(
    stopLater,
    productionChain(anvil.url, [
      UNLIMITED_READS,
      ['max_connections: 10000', `max_connections: ${CONNECTIONS + 100}`],
      // All from one address: the per-source share (156 by default) would evict the idlest.
      ['# max_connections_per_source: 156', `max_connections_per_source: ${CONNECTIONS + 100}`],
      ['keep_alive_ms: 5000', 'keep_alive_ms: 600000'],
    ]),
  );
  console.log(`idle: ${CONNECTIONS} keep-alive connections, ${new Date().toISOString()}, node ${process.version}`);
  // Warm both up so that start-up allocations are not counted as the connections' cost.
  for (const url of [anvil.url, ingress.url]) {
    const warm = Array.from({ length: 50 }, () => idleConnection(Number(new URL(url).port)));
    await closeAll(await within(30_000, 'warm-up connections answered', Promise.all(warm)));
  }
  const direct = await measure('anvil', anvil.url, anvil.child.pid!);
  await closeAll(direct);
  const idle = await measure('ingress', ingress.url, ingress.child.pid!);
  const start = performance.now();
  const reply = await request(ingress.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
  const text = await reply.body.text();
  if (!text.includes('0x1fcd')) throw new Error(`unexpected answer ${text}`);
  console.log(`a fresh call with all ${CONNECTIONS} open: answered in ${(performance.now() - start).toFixed(1)} ms`);
  await closeAll(idle);
}

runBench(main);
