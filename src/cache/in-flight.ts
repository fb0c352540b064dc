/**
 * Identical reads in flight at once share one EL answer (issue 40): while a read is being asked
 * of the EL, the same method with the same params from anyone waits for that answer instead of
 * asking again, and gets it with its own `id`. Only reads asked while the first is in flight
 * join it, so no answer is shared across more than that request's own time at the EL; stateful
 * methods (filters, submissions) never share. An answer over ENTRY_MAX_BYTES, or none (the EL
 * failed, the first client left), sends each follower to the EL itself.
 */
import { IdleSweep } from '../idle-sweep.js';
import type { RpcRequest } from '../jsonrpc.js';

/** Reads whose answer is the same for everyone asking at the same moment. */
const SHARED = new Set([
  'eth_blockNumber',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBalance',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getTransactionCount',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getBlockReceipts',
  'eth_getLogs',
  'eth_feeHistory',
  'eth_syncing',
  'net_version',
]);
/** Followers of one read at most; past it, a request asks the EL itself. */
const FOLLOWERS_MAX = 1024;

/** Told the leader's answer, or undefined: ask the EL yourself. */
export type Follower = (answer: Buffer | undefined) => void;

/** A read no longer in flight: its key stays until a sweep (see `leading`). */
const SETTLED: readonly Follower[] = Object.freeze([]);
const isSettled = (followers: readonly Follower[]) => followers === SETTLED;
/** A settled key longer than this goes at once: params may be as large as a body, and are rare. */
const KEPT_KEY_MAX = 256;

export class InFlightReads {
  /** By key, the followers of the read in flight, or SETTLED: settled keys (short ones: KEPT_KEY_MAX) stay until they are many (`IdleSweep`). */
  private readonly leading = new Map<string, readonly Follower[]>();
  private readonly sweep = new IdleSweep();

  /** The key `request` shares under; undefined: it never shares. */
  keyOf(request: RpcRequest): string | undefined {
    return SHARED.has(request.method) && Array.isArray(request.params) ? `${request.method}${JSON.stringify(request.params)}` : undefined;
  }

  /** Joins the read in flight under `key`, if there is one with room: `follower` will be told. */
  follow(key: string, follower: Follower): boolean {
    const followers = this.leading.get(key);
    if (followers === undefined || followers === SETTLED || followers.length >= FOLLOWERS_MAX) return false;
    (followers as Follower[]).push(follower);
    return true;
  }

  /** Leads the read under `key` (the caller asks the EL); what it returns tells the followers, once. */
  lead(key: string): (answer: Buffer | undefined) => void {
    const followers: Follower[] = [];
    this.sweep.makeRoom(this.leading, key, isSettled);
    this.leading.set(key, followers);
    let settled = false;
    return (answer) => {
      if (settled) return;
      settled = true;
      if (this.leading.get(key) === followers) {
        if (key.length > KEPT_KEY_MAX) this.leading.delete(key);
        else this.leading.set(key, SETTLED);
      }
      for (const follower of followers) follower(answer);
    };
  }
}
