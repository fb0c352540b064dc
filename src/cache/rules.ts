/**
 * Which reads have answers that cannot change (issue 40), and when: a rule names the cache key
 * (the method and its params as read) and what makes the answer final.
 *
 * - `always`: the answer depends only on things that never change once they exist: the chain id,
 *   a block by its hash, state or a call at a block named by hash (EIP-1898).
 * - `at`: the answer is about block `number` (a number, never a tag): final once the EL's
 *   finalized head is at or past it.
 * - `blockOfAnswer`: the answer names its block (a transaction or receipt by hash, logs by block
 *   hash): final once that block is finalized.
 *
 * A null result or an error is never kept (cache.ts).
 */
import type { RpcRequest } from '../jsonrpc.js';

export type CacheRule =
  | { readonly key: string; readonly final: 'always' }
  | { readonly key: string; readonly final: 'at'; readonly number: bigint }
  | { readonly key: string; readonly final: 'blockOfAnswer' };

const BY_HASH = new Set([
  'eth_getBlockByHash',
  'eth_getBlockTransactionCountByHash',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleByBlockHashAndIndex',
]);
const BY_NUMBER = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByNumber',
  'eth_getUncleCountByBlockNumber',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getBlockReceipts',
]);
const ANSWER_NAMES_BLOCK = new Set(['eth_getTransactionByHash', 'eth_getTransactionReceipt', 'eth_getTransactionByBlockHashAndIndex']);
/** State reads: the position of their block parameter. */
const STATE_BLOCK_PARAM: ReadonlyMap<string, number> = new Map([
  ['eth_getBalance', 1],
  ['eth_getCode', 1],
  ['eth_getTransactionCount', 1],
  ['eth_getStorageAt', 2],
  ['eth_call', 1],
  ['eth_getProof', 2],
]);
const QUANTITY = /^0x(0|[1-9a-f][0-9a-f]*)$/i;
const HASH = /^0x[0-9a-fA-F]{64}$/;

export function cacheRule(request: RpcRequest): CacheRule | undefined {
  const { method } = request;
  const params = Array.isArray(request.params) ? (request.params as readonly unknown[]) : undefined;
  if (method === 'eth_chainId') return { key: method, final: 'always' };
  if (params === undefined) return undefined;
  const position = STATE_BLOCK_PARAM.get(method);
  const known = BY_HASH.has(method) || BY_NUMBER.has(method) || ANSWER_NAMES_BLOCK.has(method) || method === 'eth_getLogs';
  // Every read comes through here: the params are serialised only for a method that may be kept.
  if (!known && position === undefined) return undefined;
  // A state read at a tag (the usual `latest`) is never kept: decided before any serialising.
  if (position !== undefined && typeof params[position] === 'string' && !QUANTITY.test(params[position])) return undefined;
  const key = `${method}${JSON.stringify(params)}`;
  if (BY_HASH.has(method)) return typeof params[0] === 'string' && HASH.test(params[0]) ? { key, final: 'always' } : undefined;
  if (BY_NUMBER.has(method)) return atBlock(key, params[0]);
  if (ANSWER_NAMES_BLOCK.has(method)) return { key, final: 'blockOfAnswer' };
  if (method === 'eth_getLogs') return logsRule(key, params[0]);
  if (position === undefined) return undefined;
  const block = params[position];
  if (block !== null && typeof block === 'object' && !Array.isArray(block)) {
    const { blockHash, blockNumber, requireCanonical } = block as Record<string, unknown>;
    // requireCanonical: the answer becomes an error if the block leaves the canonical chain.
    if (typeof blockHash === 'string' && HASH.test(blockHash)) return requireCanonical === true ? undefined : { key, final: 'always' };
    return atBlock(key, blockNumber);
  }
  return atBlock(key, block);
}

function atBlock(key: string, block: unknown): CacheRule | undefined {
  return typeof block === 'string' && QUANTITY.test(block) ? { key, final: 'at', number: BigInt(block) } : undefined;
}

/** eth_getLogs: a range of numbers (final at its end), or a block hash (final with its logs' block). */
function logsRule(key: string, filter: unknown): CacheRule | undefined {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return undefined;
  const { blockHash, fromBlock, toBlock } = filter as Record<string, unknown>;
  if (blockHash !== undefined) return typeof blockHash === 'string' && HASH.test(blockHash) ? { key, final: 'blockOfAnswer' } : undefined;
  const from = atBlock(key, fromBlock);
  const to = atBlock(key, toBlock);
  if (from === undefined || to === undefined || from.final !== 'at' || to.final !== 'at' || to.number < from.number) return undefined;
  return to;
}
