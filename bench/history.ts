/**
 * Finalized history (issue 40): an explorer's or indexer's reads of what can no longer change
 * (blocks by number and hash, transactions and receipts, logs over ranges, balances at a block,
 * the chain id) with 10% `eth_blockNumber`, 100 distinct requests sent in turn by every wrk
 * connection, through the svc-ingress process (the shipped production chain, rate limits raised;
 * its read cache as shipped, then with `cache.max_bytes: 0`) and the reference Node proxy (its
 * own process), anvil direct beside them; rounds in rotating order, medians. Each proxy on a core
 * of its own where it can (bench/cores.ts).
 *
 *   npm run bench:history [-- seconds rounds clients per-block]     (defaults 3 3 32 50; needs wrk)
 */
import { startAnvil } from '../devnet/anvil.js';
import { call, receiptOf } from '../support/http.js';
import { DEV_ADDRESS } from '../support/keys.js';
import { deployEmitter, emit } from '../support/log-emitter.js';
import { canPin, LOAD_CPU, pin, PROXY_CPU } from './cores.js';
import { median, rotated } from './measure.js';
import { benchIngress, NO_READ_CACHE, ONE_ADDRESS_LOAD, productionChain, runBench, UNLIMITED_READS, type StopLater } from './production.js';
import { startReferenceProcess } from './reference-proxy.js';
import { wrk, type Run } from './wrk.js';

const SECONDS = Number(process.argv[2] ?? 3);
const ROUNDS = Number(process.argv[3] ?? 3);
const CLIENTS = Number(process.argv[4] ?? 32);
/** Transactions per block of history: an explorer's blocks are not empty. */
const PER_BLOCK = Number(process.argv[5] ?? 50);

const body = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * A chain with an explorer's history: 40 blocks of `PER_BLOCK` transactions, each emitting a log,
 * then 100 empty blocks (anvil finalizes 64 behind its head).
 */
async function makeHistory(elUrl: string): Promise<string[]> {
  const emitter = await deployEmitter(elUrl);
  const transactions: string[] = [];
  await call(elUrl, 'evm_setAutomine', [false]);
  for (let block = 0; block < 40; block++) {
    for (let n = 0; n < PER_BLOCK; n++) transactions.push(await emit(elUrl, emitter, block * PER_BLOCK + n));
    await call(elUrl, 'evm_mine', []);
  }
  await call(elUrl, 'evm_setAutomine', [true]);
  await receiptOf(elUrl, transactions.at(-1)!);
  await call(elUrl, 'anvil_mine', ['0x64']);
  const finalized = Number((await call<{ number: string }>(elUrl, 'eth_getBlockByNumber', ['finalized', false])).number);
  const hashes = await Promise.all(
    Array.from({ length: 10 }, async (_, i) => (await call<{ hash: string }>(elUrl, 'eth_getBlockByNumber', [hex(1 + i * 3), false])).hash),
  );
  const bodies: string[] = [];
  for (let i = 0; i < 10; i++) {
    bodies.push(
      body('eth_getBlockByNumber', [hex(1 + ((i * 7) % finalized)), false]),
      body('eth_getBlockByNumber', [hex(2 + ((i * 5) % (finalized - 1))), true]),
      body('eth_getBlockByHash', [hashes[i], false]),
      body('eth_getTransactionByHash', [transactions[(i * 7 * PER_BLOCK + i) % transactions.length]]),
      body('eth_getTransactionReceipt', [transactions[(i * 3 * PER_BLOCK + 1) % transactions.length]]),
      body('eth_getLogs', [{ fromBlock: hex(1 + i), toBlock: hex(10 + i), address: emitter }]),
      body('eth_getBalance', [DEV_ADDRESS, hex(1 + i * 3)]),
      body('eth_getTransactionCount', [DEV_ADDRESS, hex(2 + i * 3)]),
      body('eth_chainId', []),
      body('eth_blockNumber', []),
    );
  }
  return bodies;
}

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const bodies = await makeHistory(anvil.url);
  const edits = [UNLIMITED_READS, ...ONE_ADDRESS_LOAD];
  const cached = await benchIngress(stopLater, productionChain(anvil.url, edits));
  const uncached = await benchIngress(stopLater, productionChain(anvil.url, [...edits, NO_READ_CACHE]));
  const reference = await startReferenceProcess(anvil.url);
  stopLater(() => reference.stop());
  const pinned = canPin();
  if (pinned) for (const pid of [cached.child.pid!, uncached.child.pid!, reference.child.pid!]) pin(pid, PROXY_CPU);
  console.log(
    `history: ${bodies.length} requests in turn, ${CLIENTS} clients, ${ROUNDS} rounds of ${SECONDS} s, ${new Date().toISOString()}, node ${process.version}${pinned ? ', proxies pinned' : ''}`,
  );
  const targets: Array<[string, string, number | undefined]> = [
    ['ingress, cache', cached.url, cached.child.pid],
    ['ingress, no cache', uncached.url, uncached.child.pid],
    ['reference proxy', reference.url, reference.child.pid],
    ['anvil direct', anvil.url, undefined],
  ];
  const runs = new Map<string, Run[]>(targets.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url, pid] of rotated(targets, round)) {
      runs.get(name)!.push(await wrk(url, bodies, CLIENTS, SECONDS, { cpu: pinned ? LOAD_CPU : undefined, cpuPid: pid }));
    }
  }
  const referenceRps = median(runs.get('reference proxy')!.map((r) => r.rps));
  for (const [name] of targets) {
    const list = runs.get(name)!;
    const rps = median(list.map((r) => r.rps));
    console.log(
      `${name.padEnd(18)} ${rps.toFixed(0).padStart(7)} req/s  x${(rps / referenceRps).toFixed(2)} the reference  ` +
        `p50 ${median(list.map((r) => r.p50)).toFixed(2)} ms  p99 ${median(list.map((r) => r.p99)).toFixed(2)} ms` +
        (list[0]!.cpuUsPerCall === undefined ? '' : `  ${median(list.map((r) => r.cpuUsPerCall!)).toFixed(0)} µs CPU per call`),
    );
  }
}

runBench(main);
