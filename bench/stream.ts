/**
 * Streaming: one block's eth_getLogs (~13 MiB, 28,000 logs) through the svc-ingress process with
 * the shipped production chain, against anvil direct in the same run: time to first byte and
 * total (median and fastest of REPS each, alternating: anvil's own time to answer varies by
 * ±20 ms from call to call, so the fastest runs show the floor the ingress adds), then the ingress's peak RSS while 32 such answers
 * are in flight to clients that stop reading, beside what buffering them would cost.
 *
 *   npm run bench:stream [-- reps]        (default 30)
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request } from 'undici';
import { startAnvil } from '../devnet/anvil.js';
import { memoryOf, mineLogBomb } from '../support/log-bomb.js';
import { within } from '../support/within.js';
import { median } from './measure.js';
import { benchIngress, productionChain, runBench, UNLIMITED_READS, type StopLater } from './production.js';

const REPS = Number(process.argv[2] ?? 30);
const HELD = 32;
const MiB = 1024 * 1024;

interface Timing {
  firstByteMs: number;
  totalMs: number;
  bytes: Buffer;
}

function timed(url: string, body: string): Promise<Timing> {
  return within(30_000, `eth_getLogs from ${url}`, timedCall(url, body));
}

async function timedCall(url: string, body: string): Promise<Timing> {
  const start = performance.now();
  const reply = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  let firstByteMs: number | undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of reply.body) {
    firstByteMs ??= performance.now() - start;
    chunks.push(chunk as Buffer);
  }
  return { firstByteMs: firstByteMs!, totalMs: performance.now() - start, bytes: Buffer.concat(chunks) };
}

/** Opens a request whose client reads its first chunk, then stops reading until `release`. */
function held(url: string, body: string): Promise<{ response: IncomingMessage; release(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (response) => {
      response.once('data', () => {
        response.pause();
        resolve({
          response,
          release: () =>
            new Promise<void>((done) => {
              response.on('end', done).resume();
            }),
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const ingress = await benchIngress(stopLater, productionChain(anvil.url, [UNLIMITED_READS]));
  const block = await mineLogBomb(anvil.url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: block, toBlock: block }] });
  const [direct, through] = [await timed(anvil.url, body), await timed(ingress.url, body)];
  if (!direct.bytes.equals(through.bytes)) throw new Error('the ingress answered different bytes than anvil');
  console.log(
    `stream: eth_getLogs of one block, ${(direct.bytes.length / MiB).toFixed(1)} MiB, ${REPS} runs each, ${new Date().toISOString()}, node ${process.version}`,
  );

  const runs = { direct: [] as Timing[], ingress: [] as Timing[] };
  for (let i = 0; i < REPS; i++) {
    runs.direct.push(await timed(anvil.url, body));
    runs.ingress.push(await timed(ingress.url, body));
  }
  const ttfb = { direct: median(runs.direct.map((r) => r.firstByteMs)), ingress: median(runs.ingress.map((r) => r.firstByteMs)) };
  const total = { direct: median(runs.direct.map((r) => r.totalMs)), ingress: median(runs.ingress.map((r) => r.totalMs)) };
  console.log('                      direct   ingress   ingress - direct   ingress / direct');
  console.log(
    `first byte, median  ${ttfb.direct.toFixed(1).padStart(7)} ms ${ttfb.ingress.toFixed(1).padStart(6)} ms ${(ttfb.ingress - ttfb.direct).toFixed(1).padStart(12)} ms ${(ttfb.ingress / ttfb.direct).toFixed(2).padStart(15)}`,
  );
  console.log(
    `total, median       ${total.direct.toFixed(1).padStart(7)} ms ${total.ingress.toFixed(1).padStart(6)} ms ${(total.ingress - total.direct).toFixed(1).padStart(12)} ms ${(total.ingress / total.direct).toFixed(2).padStart(15)}`,
  );
  const fastest = {
    direct: Math.min(...runs.direct.map((r) => r.firstByteMs)),
    ingress: Math.min(...runs.ingress.map((r) => r.firstByteMs)),
  };
  console.log(
    `first byte, fastest ${fastest.direct.toFixed(1).padStart(7)} ms ${fastest.ingress.toFixed(1).padStart(6)} ms ${(fastest.ingress - fastest.direct).toFixed(1).padStart(12)} ms ${(fastest.ingress / fastest.direct).toFixed(2).padStart(15)}`,
  );

  const pid = ingress.child.pid!;
  const baseline = memoryOf(pid).rssKiB;
  const open = await within(60_000, 'answers held open', Promise.all(Array.from({ length: HELD }, () => held(ingress.url, body))));
  // Give the EL time to push what the sockets will take while the clients do not read.
  let peak = 0;
  for (let i = 0; i < 20; i++) {
    peak = Math.max(peak, memoryOf(pid).rssKiB);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await within(60_000, 'held answers read to the end', Promise.all(open.map((o) => o.release())));
  const growthMiB = (peak - baseline) / 1024;
  const bufferedMiB = (HELD * direct.bytes.length) / MiB;
  console.log(
    `ingress RSS: ${(baseline / 1024).toFixed(0)} MiB before, ${(peak / 1024).toFixed(0)} MiB peak with ${HELD} answers held open ` +
      `(+${growthMiB.toFixed(0)} MiB; buffering them would hold ${bufferedMiB.toFixed(0)} MiB)`,
  );
}

runBench(main);
