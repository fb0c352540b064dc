/**
 * An indexer's polling loop against the endpoint, in plain fetch: no WebSocket, no batches.
 *
 * Each pass asks eth_blockNumber, then reads the new blocks' logs with eth_getLogs over at most
 * RANGE blocks per call, and sleeps a block interval when it has caught up. On HTTP 429 it waits
 * the `Retry-After` seconds and asks again: under the shipped limits an eth_getLogs costs 20 of a
 * source's 300 read tokens a second (15 calls a second sustained, 30 at once), eth_blockNumber 1.
 *
 * Run: `node dist/examples/clients/indexer.js` (RPC_URL; FROM_BLOCK, default 0; STOP_AT_BLOCK
 * to stop once that block is read, default: run until interrupted).
 */
import { pathToFileURL } from 'node:url';
import { RPC_URL } from '../chain.js';

const RANGE = 1_000n;
const POLL_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let nextId = 1;

/** One JSON-RPC call per POST; waits and asks again while the endpoint answers 429. */
export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  for (;;) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    if (response.status === 429) {
      await response.body?.cancel();
      await sleep(1_000 * Number(response.headers.get('retry-after') ?? '1'));
      continue;
    }
    const answer = (await response.json()) as { result?: T; error?: { code: number; message: string } };
    if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
    return answer.result as T;
  }
}

export interface Log {
  readonly blockNumber: string;
  readonly address: string;
  readonly topics: readonly string[];
}

/** Reads every log from `from` on, RANGE blocks per call, handing each range's logs to `onLogs`. */
export async function index(
  url: string,
  from: bigint,
  stopAt: bigint | undefined,
  onLogs: (first: bigint, last: bigint, logs: Log[]) => void,
): Promise<void> {
  let next = from;
  for (;;) {
    const head = BigInt(await rpc<string>(url, 'eth_blockNumber'));
    while (next <= head) {
      const last = next + RANGE - 1n < head ? next + RANGE - 1n : head;
      const logs = await rpc<Log[]>(url, 'eth_getLogs', [{ fromBlock: `0x${next.toString(16)}`, toBlock: `0x${last.toString(16)}` }]);
      onLogs(next, last, logs);
      next = last + 1n;
    }
    if (stopAt !== undefined && next > stopAt) return;
    await sleep(POLL_MS);
  }
}

async function main(): Promise<void> {
  const from = BigInt(process.env.FROM_BLOCK ?? '0');
  const stopAt = process.env.STOP_AT_BLOCK === undefined ? undefined : BigInt(process.env.STOP_AT_BLOCK);
  await index(RPC_URL, from, stopAt, (first, last, logs) => console.log(`blocks ${first}-${last}: ${logs.length} logs`));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
