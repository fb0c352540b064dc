/**
 * An attacker's subscriptions, as a process of its own (so that reading them does not load the
 * test's event loop): `node dist/support/subscription-flood.js <ws-url> <connections>
 * <subscriptions-per-connection> [local-address]` opens the connections, subscribes each to every
 * log (`logs` with no filter), prints `subscribed`, then reads and counts what comes until
 * SIGTERM, when it prints `received <messages> <bytes> closed <connections closed> <codes>`.
 */
import WebSocket from 'ws';

const [url, connections, perConnection, localAddress] = process.argv.slice(2);
let messages = 0;
let bytes = 0;
const codes: number[] = [];

const sockets = await Promise.all(
  Array.from({ length: Number(connections) }, async () => {
    const ws = new WebSocket(url!, localAddress === undefined ? {} : { localAddress });
    let answered = 0;
    const subscribed = new Promise<void>((resolve) =>
      ws.on('message', (data: Buffer) => {
        messages++;
        bytes += data.length;
        if (++answered === Number(perConnection)) resolve();
      }),
    );
    ws.on('close', (code) => codes.push(code));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    for (let i = 0; i < Number(perConnection); i++)
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: ['logs', {}] }));
    await subscribed;
    return ws;
  }),
);
messages = 0;
bytes = 0;
console.log('subscribed');
// Alive until told, whether or not the ingress closes the connections.
const alive = setInterval(() => {}, 1_000);
process.once('SIGTERM', () => {
  console.log(`received ${messages} ${bytes} closed ${codes.length} ${codes.join(',')}`);
  for (const ws of sockets) ws.terminate();
  clearInterval(alive);
  process.exit(0);
});
