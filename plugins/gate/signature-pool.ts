/**
 * Frame signature checks off the event loop. A frame transaction may carry up to 14 P256 or 11
 * ML-DSA-65 entries within the prefix budget, 25-40 ms of CPU: done on the event loop, a source
 * sending them at its quota stalled every other request (an `eth_chainId` median of ~2 ms rose
 * to ~500 ms). They run in a pool of worker threads (piscina); the event loop only decodes.
 *
 * Entries that are only SECP256K1 (native libsecp256k1, ~50 µs each) or ARBITRARY, at most
 * `INLINE_SECP256K1_MAX` of them, are cheaper to check in place than to hand to a thread.
 *
 * The queue is bounded: past `maxQueue` waiting transactions the pool is at capacity and the
 * submission is refused like a full host bucket (-32005), never queued without end.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { Refusal } from './refusal.js';
import type { PoolRefusal } from './signature-worker.js';
import { verifyFrameSignatures, type SignedFrames } from './signatures.js';

const INLINE_SECP256K1_MAX = 4;
const INLINE_SCHEMES = new Set([0x00, 0x01]);

/** The pool is full: not a verdict on the transaction. */
export class PoolBusy extends Error {
  override name = 'PoolBusy';
}

export interface SignaturePool {
  /** Throws a Refusal for a bad entry, PoolBusy when the queue is full. */
  verify(tx: SignedFrames): Promise<void>;
  close(): Promise<void>;
}

/** Threads by default: every core but one for the event loop, at least one. */
export const defaultThreads = () => Math.max(1, Math.min(4, availableParallelism() - 1));

export function createSignaturePool(threads: number, maxQueue: number): SignaturePool {
  // Started on the first transaction that needs it: most ingresses of a test suite never do.
  let pool: Piscina | undefined;
  return {
    async verify(tx) {
      const inline = tx.signatures.length <= INLINE_SECP256K1_MAX && tx.signatures.every((e) => INLINE_SCHEMES.has(e.scheme));
      if (inline) return verifyFrameSignatures(tx);
      pool ??= new Piscina({
        filename: new URL('./signature-worker.js', import.meta.url).href,
        minThreads: threads,
        maxThreads: threads,
        maxQueue,
        idleTimeout: Number.MAX_SAFE_INTEGER,
      });
      if (pool.queueSize >= maxQueue) throw new PoolBusy('the signature pool is at capacity');
      const task: SignedFrames = { sender: tx.sender, sigHash: tx.sigHash, signatures: tx.signatures };
      const refusal = (await pool.run(task)) as PoolRefusal | undefined;
      if (refusal !== undefined) throw new Refusal(refusal.reason, refusal.detail);
    },
    async close() {
      const running = pool;
      pool = undefined;
      await running?.destroy();
    },
  };
}
