/**
 * The price of eth_getProof: its `method_costs` (the account proof), and one read token per
 * PROOF_KEYS_PER_TOKEN storage keys it asks for, at most the burst. A flat price let 7,000 keys
 * take 0.4 s of EL time and a 20 MB answer for one request's tokens; each storage proof is a
 * branch of the account's trie (~3 KB), about what a 4 KiB body token pays to be received.
 */
import type { RpcRequest } from '../../src/plugin.js';

export const PROOF_METHOD = 'eth_getProof';
export const PROOF_KEYS_PER_TOKEN = 4;

export function proofCost(request: RpcRequest, least: number, burst: number): number {
  const keys = Array.isArray(request.params) ? request.params[1] : undefined;
  const count = Array.isArray(keys) ? keys.length : 0;
  return Math.min(least + Math.ceil(count / PROOF_KEYS_PER_TOKEN), burst);
}
