/**
 * The devnet's consensus-node stand-in: a development and test fixture, not a consensus
 * implementation. A single "validator" that serves the node's local API (node-api.md) over a
 * real anvil running with mining off:
 *
 * - `eth_sendRawTransaction` queues the bytes; every commit (`commitIntervalMs`) orders the queue
 *   first-in-first-out and hands it to anvil's pool; the call answers once its commit exists.
 * - An EL block closes (one `evm_mine`) once per `blockIntervalMs` of consensus time while
 *   transactions wait, and one empty heartbeat block follows `heartbeatCommits` blockless commits.
 * - Frame transactions (type 0x06), which anvil cannot run, go to the execution stand-in
 *   (frames/frame-chain.ts) instead of anvil's pool: they run when their block closes, after
 *   the block's own transactions.
 * - Transactions the EL skips are counted by reason: refused by anvil's pool, or left out of the
 *   block they were due in (a nonce gap: `nonce_too_high`), then dropped from anvil's pool;
 *   frame transactions the execution stand-in finds invalid by its reason.
 * - A checkpoint is certified every `checkpointEvery` commits; a journal keeps recent commits.
 */
import { statfs } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { keccak256, toUtf8Bytes, Transaction } from 'ethers';
import type { FrameChain } from './frames/frame-chain.js';
import { RpcError, rpcClient } from './rpc.js';

export interface StandInOptions {
  readonly elUrl: string;
  readonly port?: number;
  readonly commitIntervalMs?: number;
  readonly blockIntervalMs?: number;
  readonly heartbeatCommits?: number;
  readonly checkpointEvery?: number;
  /** Where frame transactions run; without it they go to anvil, which refuses them (`other`). */
  readonly frames?: FrameChain;
}

export interface CommitRecord {
  index: number;
  digest: string;
  leaderAuthority: number;
  leaderRound: number;
  leaderDigest: string;
  timestampMs: number;
  blocks: number;
  transactions: number;
  elBlocks: string[];
}

export interface NodeStandIn {
  readonly url: string;
  stop(): Promise<void>;
}

const COMMITS_KEPT = 10_000;
const JOURNAL_KEPT = 1_000;
const DEFAULT_LIMIT = 64;

const EL_REASONS: Array<[RegExp, string]> = [
  [/nonce too low/i, 'nonce_too_low'],
  [/nonce too high/i, 'nonce_too_high'],
  [/insufficient funds/i, 'insufficient_funds'],
  [/fee cap|base fee|fee per gas/i, 'fee_cap_too_low'],
  [/gas limit|gas too high|intrinsic gas|exceeds block gas/i, 'gas_overflow'],
  [/size|oversized/i, 'size_overflow'],
];

export async function startNodeStandIn(options: StandInOptions): Promise<NodeStandIn> {
  const commitIntervalMs = options.commitIntervalMs ?? 100;
  const blockIntervalMs = options.blockIntervalMs ?? 1_000;
  const heartbeatCommits = options.heartbeatCommits ?? 1_200;
  const checkpointEvery = options.checkpointEvery ?? 10;

  const el = rpcClient(options.elUrl);

  const commits: CommitRecord[] = [];
  const journal: Array<{ index: number; digest: string; transactions: string[] }> = [];
  const checkpoints: Array<{ sequence: number; commitIndex: number; digest: string; timestampMs: number }> = [];
  let queue: Array<{ raw: string; ordered: (commit: number) => void }> = [];
  let inPool: Array<{ hash: string; sender: string; nonce: number }> = [];
  let framesDue: string[] = [];
  let lastBlockAt = 0;
  let blockless = 0;
  let digest = keccak256(toUtf8Bytes('svc-ingress devnet genesis'));
  const driver = {
    forced_txs_total: 0,
    forced_txs_dropped_total: 0,
    blocks_with_drops_total: 0,
    skip_all_dropped_total: 0,
    finalizer_rejected_skips_total: 0,
    idle_heartbeat_blocks_total: 0,
  };
  const skipped: Record<string, number> = {
    fee_cap_too_low: 0,
    gas_overflow: 0,
    insufficient_funds: 0,
    nonce_too_high: 0,
    nonce_too_low: 0,
    other: 0,
    size_overflow: 0,
    total: 0,
  };
  const drop = (reason: string) => {
    skipped[reason]!++;
    skipped.total!++;
    driver.forced_txs_dropped_total++;
  };

  const mine = async (): Promise<string> => {
    await el('evm_mine');
    const block = (await el('eth_getBlockByNumber', ['latest', false])) as { number: string };
    return block.number;
  };

  /** Mines the block due, executes the frame transactions ordered for it, and drops what it left out. */
  const closeBlock = async (now: number, elBlocks: string[]): Promise<void> => {
    const { frames } = options;
    const { number, frameSkips } =
      frames === undefined
        ? { number: await mine(), frameSkips: [] }
        : await frames.whileClosing(async () => ({ number: await mine(), frameSkips: await frames.closeBlock(framesDue) }));
    for (const { reason } of frameSkips) drop(reason);
    framesDue = [];
    const included = new Set(((await el('eth_getBlockByNumber', [number, false])) as { transactions: string[] }).transactions);
    const left = inPool.filter((p) => !included.has(p.hash));
    // What the block left out was skipped: behind a gap, its nonce is too high.
    for (const tx of left) {
      drop('nonce_too_high');
      await el('anvil_dropTransaction', [tx.hash]);
    }
    if (left.length > 0 || frameSkips.length > 0) driver.blocks_with_drops_total++;
    inPool = [];
    elBlocks.push(number);
    lastBlockAt = now;
    blockless = 0;
  };

  /**
   * One commit: closes an EL block for what earlier commits ordered, when one is due, then
   * orders the queue first-in-first-out and hands it to the EL's pool.
   */
  const commit = async (): Promise<void> => {
    const now = Date.now();
    const ordered = queue;
    queue = [];
    const elBlocks: string[] = [];
    if ((inPool.length > 0 || framesDue.length > 0) && now - lastBlockAt >= blockIntervalMs) {
      await closeBlock(now, elBlocks).catch((err: unknown) => {
        // The commit still orders and answers its submissions; the frame transactions the block
        // could not execute are dropped (counted as other), not replayed into every later block.
        for (const _ of framesDue) drop('other');
        framesDue = [];
        process.stderr.write(`devnet node stand-in: closing an EL block failed: ${String(err)}\n`);
      });
    } else if (inPool.length === 0 && framesDue.length === 0 && ++blockless >= heartbeatCommits) {
      elBlocks.push(await mine());
      driver.idle_heartbeat_blocks_total++;
      blockless = 0;
    }
    driver.forced_txs_total += ordered.length;
    const hashes = ordered.map(({ raw }) => keccak256(raw));
    for (const { raw } of ordered) {
      if (options.frames !== undefined && raw.slice(0, 4).toLowerCase() === '0x06') {
        framesDue.push(raw);
        continue;
      }
      try {
        await el('eth_sendRawTransaction', [raw]);
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
        drop(EL_REASONS.find(([pattern]) => pattern.test(err.message))?.[1] ?? 'other');
        continue;
      }
      const tx = Transaction.from(raw);
      inPool.push({ hash: keccak256(raw), sender: tx.from!.toLowerCase(), nonce: tx.nonce });
    }
    const index = commits.length === 0 ? 1 : commits[commits.length - 1]!.index + 1;
    digest = keccak256(toUtf8Bytes(`${digest}:${index}:${hashes.join(',')}`));
    commits.push({
      index,
      digest,
      leaderAuthority: 0,
      leaderRound: index,
      leaderDigest: keccak256(toUtf8Bytes(`leader:${digest}`)),
      timestampMs: now,
      blocks: 1,
      transactions: ordered.length,
      elBlocks,
    });
    if (commits.length > COMMITS_KEPT) commits.shift();
    journal.push({ index, digest, transactions: hashes });
    if (journal.length > JOURNAL_KEPT) journal.shift();
    if (index % checkpointEvery === 0) checkpoints.push({ sequence: checkpoints.length + 1, commitIndex: index, digest, timestampMs: now });
    for (const { ordered: done } of ordered) done(index);
  };

  let stopped = false;
  let ticking: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    ticking = ticking.then(commit).catch((err: unknown) => {
      process.stderr.write(`devnet node stand-in: a commit failed: ${String(err)}\n`);
    });
  }, commitIntervalMs);

  const latestCheckpoint = () => checkpoints[checkpoints.length - 1];
  const methods: Record<string, (params: unknown[]) => unknown | Promise<unknown>> = {
    eth_sendRawTransaction: ([raw]) =>
      new Promise((resolve) => queue.push({ raw: String(raw), ordered: () => resolve(keccak256(String(raw))) })),
    svc_getRecentCommits: ([since, limit]) => {
      const n = typeof limit === 'number' ? limit : DEFAULT_LIMIT;
      const page = since === null || since === undefined ? commits.slice(-n) : commits.filter((c) => c.index > Number(since)).slice(0, n);
      return { commits: page };
    },
    svc_dropStats: () => ({ driver: { ...driver }, el: { ...skipped } }),
    svc_nodeHealth: () => ({
      latestHandledCommit: commits[commits.length - 1]?.index ?? 0,
      latestCertifiedCheckpoint: latestCheckpoint() ?? null,
      retention: { targetFloor: 0, diskGuardActive: false },
      observer: { stranded: false, stalledSeconds: 0 },
      snapshotServing: { enabled: false },
      freshness: { lagCommits: (commits[commits.length - 1]?.index ?? 0) - (latestCheckpoint()?.commitIndex ?? 0), alarmsTotal: 0 },
    }),
    svc_getCheckpointChain: () => ({ checkpoints }),
    svc_getJournalTail: ([limit]) => ({ entries: journal.slice(-(typeof limit === 'number' ? limit : 100)) }),
    svc_metrics: async () => {
      const fs = await statfs(tmpdir());
      return {
        checkpoint_lag_commits: (commits[commits.length - 1]?.index ?? 0) - (latestCheckpoint()?.commitIndex ?? 0),
        checkpoint_freshness_alarms_total: 0,
        retention_target_floor: commits[0]?.index ?? 0,
        retention_disk_guard_active: 0,
        retention_disk_free_bytes: fs.bavail * fs.bsize,
        observer_stranded: 0,
        follower_stalled_seconds: 0,
        archive_cert_gap_sequences: 0,
        block_key_rotations_applied_total: 0,
      };
    },
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      let call: { id?: unknown; method?: string; params?: unknown[] };
      try {
        call = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        call = {};
      }
      const method = call.method !== undefined && Object.hasOwn(methods, call.method) ? methods[call.method] : undefined;
      const body =
        method === undefined
          ? { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32601, message: 'the method does not exist/is not available' } }
          : { jsonrpc: '2.0', id: call.id ?? null, result: await method(Array.isArray(call.params) ? call.params : []) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await ticking;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
