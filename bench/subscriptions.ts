/**
 * Subscriptions fanned out (issue 38): the shipped production chain in front of anvil, with a
 * counting proxy between them that notes when the ingress first sees each block (the answer to
 * its `eth_getBlockByNumber("latest")` that names it). For `newHeads` and `logs`, one subscriber
 * and then 1,000 (20 source addresses × 5 connections × 10 subscriptions): the EL requests per
 * block in each case, and for the 1,000 how long after the ingress saw a block each subscriber
 * had it (one clock: the proxy and the clients are this process).
 *
 * Then, with a soak time, memory over a churn: 1,000 subscriptions held while a tenth of the
 * connections close and reopen every second and a block (with a log) comes every 250 ms; the
 * ingress's RSS sampled every 10 s.
 *
 *   npm run bench:subscriptions [-- blocks-per-phase soak-minutes]     (defaults 20 0)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { startAnvil } from '../devnet/anvil.js';
import { call } from '../support/http.js';
import { deployEmitter, emit } from '../support/log-emitter.js';
import { memoryOf } from '../support/log-bomb.js';
import { within } from '../support/within.js';
import { benchIngress, productionChain, runBench, type StopLater } from './production.js';

const BLOCKS = Number(process.argv[2] ?? 20);
const SOAK_MINUTES = Number(process.argv[3] ?? 0);
const SOURCES = 20;
const CONNECTIONS_PER_SOURCE = 5;
const SUBSCRIPTIONS_PER_CONNECTION = 10;

/** A proxy to anvil that counts requests and notes when a block was first answered as "latest". */
async function countingProxy(target: string, stopLater: StopLater) {
  const seen = new Map<bigint, number>();
  let requests = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    requests++;
    const reply = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await reply.text();
    if (body.includes('"eth_getBlockByNumber"') && body.includes('"latest"')) {
      const number = /"number":"(0x[0-9a-f]+)"/.exec(text)?.[1];
      if (number !== undefined && !seen.has(BigInt(number))) seen.set(BigInt(number), performance.now());
    }
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stopLater(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    get requests() {
      return requests;
    },
  };
}

interface Client {
  readonly ws: WebSocket;
  /** Block numbers heard of, with when. */
  readonly heard: Array<[bigint, number]>;
}

/** A connection from `address` holding `subscriptions` of `params`. */
async function subscriber(url: string, address: string, params: unknown[], subscriptions: number): Promise<Client> {
  const ws = new WebSocket(url.replace('http:', 'ws:'), { localAddress: address });
  const heard: Array<[bigint, number]> = [];
  let answered = 0;
  let subscribed: () => void = () => {};
  const done = new Promise<void>((resolve) => (subscribed = resolve));
  ws.on('message', (data: Buffer) => {
    const at = performance.now();
    const text = data.toString();
    const number = /"(?:number|blockNumber)":"(0x[0-9a-f]+)"/.exec(text)?.[1];
    if (text.includes('"eth_subscription"') && number !== undefined) heard.push([BigInt(number), at]);
    else if (text.includes('"result":"0x') && ++answered === subscriptions) subscribed();
    else if (text.includes('"error"')) throw new Error(`refused: ${text}`);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  for (let i = 0; i < subscriptions; i++) ws.send(JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'eth_subscribe', params }));
  await within(10_000, 'subscriptions answered', done);
  return { ws, heard };
}

/** 1,000 subscriptions of `params`: SOURCES addresses × CONNECTIONS_PER_SOURCE × SUBSCRIPTIONS_PER_CONNECTION. */
function crowd(url: string, params: unknown[]): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: SOURCES * CONNECTIONS_PER_SOURCE }, (_, i) =>
      subscriber(url, `127.0.0.${2 + (i % SOURCES)}`, params, SUBSCRIPTIONS_PER_CONNECTION),
    ),
  );
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const proxy = await countingProxy(anvil.url, stopLater);
  const ingress = await benchIngress(stopLater, productionChain(proxy.url));
  const emitter = await deployEmitter(anvil.url);
  console.log(`subscriptions: ${BLOCKS} blocks per phase, ${new Date().toISOString()}, node ${process.version}`);

  /** Blocks made one at a time, each once the ingress has seen the one before. */
  const makeBlocks = async (count: number, withLog: boolean) => {
    for (let i = 0; i < count; i++) {
      const before = proxy.seen.size;
      if (withLog) await emit(anvil.url, emitter, i);
      else await call(anvil.url, 'anvil_mine', ['0x1']);
      await within(
        5_000,
        'the ingress saw the block',
        (async () => {
          while (proxy.seen.size === before) await new Promise((resolve) => setTimeout(resolve, 5));
        })(),
      );
    }
  };

  const phase = async (kind: string, params: unknown[], many: boolean) => {
    const clients = many ? await crowd(ingress.url, params) : [await subscriber(ingress.url, '127.0.0.2', params, 1)];
    const expected = clients.length * (many ? SUBSCRIPTIONS_PER_CONNECTION : 1) * BLOCKS;
    // The first block after subscribing only starts the feed's follow: counted from the second.
    await makeBlocks(1, kind === 'logs');
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const client of clients) client.heard.length = 0;
    const requestsBefore = proxy.requests;
    await makeBlocks(BLOCKS, kind === 'logs');
    await within(
      10_000,
      'every notification',
      (async () => {
        while (clients.reduce((sum, c) => sum + c.heard.length, 0) < expected) await new Promise((resolve) => setTimeout(resolve, 5));
      })(),
    );
    const requests = proxy.requests - requestsBefore;
    const delays = clients.flatMap((c) => c.heard.map(([number, at]) => at - proxy.seen.get(number)!)).sort((a, b) => a - b);
    for (const client of clients) client.ws.close();
    const subscriptions = expected / BLOCKS;
    console.log(
      `${kind.padEnd(8)} ${String(subscriptions).padStart(5)} subscriptions: ${(requests / BLOCKS).toFixed(2)} EL requests per block; ` +
        `after the ingress saw the block: p50 ${percentile(delays, 50).toFixed(1)} ms, p99 ${percentile(delays, 99).toFixed(1)} ms, ` +
        `max ${delays.at(-1)!.toFixed(1)} ms, ${((100 * delays.filter((d) => d <= 50).length) / delays.length).toFixed(1)}% within 50 ms`,
    );
  };
  await phase('newHeads', ['newHeads'], false);
  await phase('newHeads', ['newHeads'], true);
  await phase('logs', ['logs', { address: emitter }], false);
  await phase('logs', ['logs', { address: emitter }], true);

  if (SOAK_MINUTES > 0) await soak(ingress.url, ingress.child.pid!, emitter, anvil.url);
}

/** 1,000 subscriptions (half newHeads, half logs) with a tenth of the connections replaced every second. */
async function soak(url: string, pid: number, emitter: string, elUrl: string): Promise<void> {
  const open = (i: number) =>
    subscriber(
      url,
      `127.0.0.${2 + (i % SOURCES)}`,
      i % 2 === 0 ? ['newHeads'] : ['logs', { address: emitter }],
      SUBSCRIPTIONS_PER_CONNECTION,
    );
  const clients = await Promise.all(Array.from({ length: SOURCES * CONNECTIONS_PER_SOURCE }, (_, i) => open(i)));
  const end = performance.now() + SOAK_MINUTES * 60_000;
  let n = 0;
  const blocks = setInterval(() => void emit(elUrl, emitter, n++).catch(() => {}), 250);
  const samples: Array<[number, number]> = [];
  const started = performance.now();
  let nextSample = started;
  let replaced = 0;
  try {
    while (performance.now() < end) {
      for (let k = 0; k < clients.length / 10; k++) {
        const i = Math.floor(Math.random() * clients.length);
        clients[i]!.ws.close();
        clients[i] = await open(i);
        replaced++;
      }
      if (performance.now() >= nextSample) {
        samples.push([(performance.now() - started) / 60_000, memoryOf(pid).rssKiB / 1024]);
        nextSample += 10_000;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    clearInterval(blocks);
    for (const client of clients) client.ws.close();
  }
  const firstMinute = samples.filter(([minute]) => minute >= 1).at(0)!;
  const last = samples.at(-1)!;
  console.log(
    `soak ${SOAK_MINUTES} min, ${replaced} connections replaced (${replaced * SUBSCRIPTIONS_PER_CONNECTION} subscriptions), ${n} blocks: ` +
      `RSS ${samples[0]![1].toFixed(1)} MiB at start, ${firstMinute[1].toFixed(1)} at minute ${firstMinute[0].toFixed(1)}, ` +
      `${last[1].toFixed(1)} at minute ${last[0].toFixed(1)}, max ${Math.max(...samples.map(([, rss]) => rss)).toFixed(1)}`,
  );
}

runBench(main, 60 * 60_000);
