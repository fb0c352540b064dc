/**
 * The devnet's execution-layer front: a development stand-in in front of anvil that answers
 * what the chain's own EL (a reth-based client) answers and anvil does not, and passes every
 * other call to anvil unchanged. Never part of the ingress: the ingress sees it as its EL.
 *
 * - `svc_historyStatus` (spec 2.1): tier `tx-history`; `headBlock` anvil's head; a node keeps
 *   full bodies for the last `witnessWindowBlocks` blocks (`earliestFullBody`); nothing has
 *   expired (`historyCutoff` 0); anvil holds all state in memory, so `persistedState` is 0,
 *   "unknown" in the spec's words (consumers then prune nothing).
 * - Block-scoped reads of spec 4.1 for a block below `earliestFullBody` answer error 4444, as
 *   the reth-based client does below its witness-sidecar window, so that clients can see and
 *   handle it: eth_getBlockReceipts, eth_getBlockTransactionCountBy{Hash,Number},
 *   eth_get{,Raw}TransactionByBlock{Hash,Number}AndIndex, eth_getLogs (by its fromBlock or
 *   blockHash).
 * - The stripped store (stripped/methods.ts): `svc_getStrippedTransaction`,
 *   `svc_getSignatureSidecar`, and `strippedTransactionsRoot` on block objects.
 * - Frame transactions, which anvil cannot hold, from the execution stand-in
 *   (frames/frame-chain.ts): eth_getTransactionReceipt, eth_getTransactionByHash and
 *   eth_getRawTransactionByHash (frames/rpc-shapes.ts); their receipts and logs added to
 *   eth_getBlockReceipts and eth_getLogs (frames/frame-logs.ts); listed in blocks, counted, and
 *   found by block and index (frames/frame-blocks.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { FrameChain } from './frames/frame-chain.js';
import { frameBlockReads } from './frames/frame-blocks.js';
import { frameAwareReads } from './frames/frame-logs.js';
import { RpcError, rpcClient } from './rpc.js';
import { InvalidParams, strippedMethods } from './stripped/methods.js';
import { StrippedBlocks } from './stripped/stripped-blocks.js';
import { frameReceiptRpc, frameTransactionRpc } from './frames/rpc-shapes.js';

export interface ElFrontOptions {
  readonly anvilUrl: string;
  /** Blocks whose full bodies the node keeps; below them, block-scoped reads answer 4444. */
  readonly witnessWindowBlocks: number;
  /** The frame transactions the devnet executed, if it executes them. */
  readonly frames?: FrameChain;
}

export interface ElFront {
  readonly url: string;
  close(): Promise<void>;
}

interface Call {
  readonly id: unknown;
  readonly method: string;
  readonly params?: unknown;
}

/** The EIP-4444 convention the reth-based client follows. */
const PRUNED = { code: 4444, message: 'pruned history unavailable' };

/** Where each block-scoped read names its block: a number or tag, or a hash. */
const BLOCK_SCOPED: Record<string, { readonly param: number; readonly byHash: boolean }> = {
  eth_getBlockReceipts: { param: 0, byHash: false },
  eth_getBlockTransactionCountByNumber: { param: 0, byHash: false },
  eth_getBlockTransactionCountByHash: { param: 0, byHash: true },
  eth_getTransactionByBlockNumberAndIndex: { param: 0, byHash: false },
  eth_getTransactionByBlockHashAndIndex: { param: 0, byHash: true },
  eth_getRawTransactionByBlockNumberAndIndex: { param: 0, byHash: false },
  eth_getRawTransactionByBlockHashAndIndex: { param: 0, byHash: true },
};

export async function startElFront(options: ElFrontOptions): Promise<ElFront> {
  const anvil = rpcClient(options.anvilUrl);
  const head = async () => BigInt((await anvil('eth_blockNumber', [])) as string);
  const earliestFullBody = async () => {
    const latest = await head();
    const window = BigInt(options.witnessWindowBlocks);
    return latest > window ? latest - window : 0n;
  };
  /** The block number a block parameter names, or undefined for what anvil should judge itself. */
  const blockNumberOf = async (param: unknown, byHash: boolean): Promise<bigint | undefined> => {
    if (typeof param === 'string' && param === 'earliest') return 0n;
    if (typeof param !== 'string' || !param.startsWith('0x')) return undefined;
    if (!byHash) return BigInt(param);
    const block = (await anvil('eth_getBlockByHash', [param, false])) as { number?: string } | null;
    return block?.number === undefined ? undefined : BigInt(block.number);
  };
  const prunedBlock = async (call: Call): Promise<boolean> => {
    const params = Array.isArray(call.params) ? call.params : [];
    const scoped = BLOCK_SCOPED[call.method];
    let block: bigint | undefined;
    if (scoped !== undefined) block = await blockNumberOf(params[scoped.param], scoped.byHash);
    else if (call.method === 'eth_getLogs') {
      const filter = (params[0] ?? {}) as { fromBlock?: unknown; blockHash?: unknown };
      block =
        filter.blockHash !== undefined
          ? await blockNumberOf(filter.blockHash, true)
          : await blockNumberOf(filter.fromBlock ?? 'latest', false);
    } else return false;
    return block !== undefined && block < (await earliestFullBody());
  };

  const stripped = strippedMethods(anvil, new StrippedBlocks(anvil, options.frames), options.frames, earliestFullBody);
  const frameAnswers: Record<string, (record: NonNullable<ReturnType<FrameChain['record']>>) => unknown> = {
    eth_getTransactionReceipt: frameReceiptRpc,
    eth_getTransactionByHash: frameTransactionRpc,
    eth_getRawTransactionByHash: (record) => record.raw,
  };
  const frameReads =
    options.frames === undefined ? {} : { ...frameAwareReads(anvil, options.frames), ...frameBlockReads(anvil, options.frames) };
  const frameRecord = (call: Call) => {
    const hash = Array.isArray(call.params) ? call.params[0] : undefined;
    return Object.hasOwn(frameAnswers, call.method) && typeof hash === 'string' ? options.frames?.record(hash) : undefined;
  };

  const answer = async (call: Call): Promise<object | undefined> => {
    const record = frameRecord(call);
    if (record !== undefined) return { result: frameAnswers[call.method]!(record) };
    if (call.method === 'svc_historyStatus') {
      const latest = await head();
      return {
        result: {
          tier: 'tx-history',
          headBlock: `0x${latest.toString(16)}`,
          earliestFullBody: `0x${(await earliestFullBody()).toString(16)}`,
          historyCutoff: '0x0',
          persistedState: '0x0',
        },
      };
    }
    const params = Array.isArray(call.params) ? call.params : [];
    if (Object.hasOwn(stripped, call.method)) {
      try {
        return { result: await stripped[call.method]!(params) };
      } catch (err) {
        if (err instanceof InvalidParams) return { error: { code: -32602, message: `invalid params: ${err.message}` } };
        throw err;
      }
    }
    if (await prunedBlock(call)) return { error: PRUNED };
    if (Object.hasOwn(frameReads, call.method)) {
      try {
        return { result: await frameReads[call.method]!(params) };
      } catch (err) {
        // anvil's refusal of the params (a bad filter, say) is answered as anvil gave it.
        if (err instanceof RpcError) return { error: { code: err.code, message: err.message } };
        throw err;
      }
    }
    return undefined;
  };

  /** One JSON-RPC call object, or undefined for anything else (a batch, not JSON). */
  const parsed = (body: Buffer): Call | undefined => {
    try {
      const call: unknown = JSON.parse(body.toString());
      return call !== null && typeof call === 'object' && !Array.isArray(call) ? (call as Call) : undefined;
    } catch {
      return undefined;
    }
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      // A block being closed is shown once its frame transactions are in it.
      await options.frames?.settled();
      const body = Buffer.concat(chunks);
      const call = parsed(body);
      if (call !== undefined) {
        // A failure of the front's own answer is the front's: said, never covered by anvil's answer.
        const own = await answer(call).catch((err: unknown) => ({ error: { code: -32603, message: `devnet EL front: ${String(err)}` } }));
        if (own !== undefined) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...own }));
          return;
        }
      }
      // Not one call this front reads: anvil answers it, as it would have.
      try {
        const reply = await request(options.anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(reply.statusCode, { 'content-type': String(reply.headers['content-type'] ?? 'application/json') });
        for await (const chunk of reply.body) res.write(chunk);
        res.end();
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
