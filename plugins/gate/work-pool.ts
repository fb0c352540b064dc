/**
 * The gate's expensive work off the event loop, in a pool of worker threads (piscina):
 *
 * - frame signature entries: up to 14 P256 or 11 ML-DSA-65 fit the prefix budget, 25-40 ms of
 *   CPU. Done on the event loop, a source sending them at its quota stalled every other request
 *   (an `eth_chainId` median of ~2 ms rose to ~500 ms). Entries that are only SECP256K1 (native
 *   libsecp256k1, ~50 µs each) or ARBITRARY, a handful at most, are checked in place: cheaper
 *   than the hop to a thread;
 * - validation-prefix simulation in the embedded EVM (up to 100,000 gas of account code).
 *
 * The queue is bounded: past `maxQueue` waiting tasks the pool is at capacity and the submission
 * is refused like a full host bucket (-32005), never queued without end.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { Frame, SignatureEntry } from './frame-codec.js';
import type { PoolRefusal, PoolSettings, PoolUnavailable, SimulateTask } from './pool-worker.js';
import { PoolBusy, Refusal, Unavailable } from './errors.js';
import { verifyFrameSignatures, type SignedFrames } from './signatures.js';

const INLINE_SECP256K1_MAX = 4;
const CONCURRENT_TASKS_PER_THREAD = 8;
const INLINE_SCHEMES = new Set([0x00, 0x01]);

// Byte fields are views of the raw transaction (or of a shared Buffer slab), and a structured
// clone copies a view's whole underlying buffer: 64 frames would send 64 copies of the raw bytes.
// Each field goes as its own bytes instead.
const detachedFrame = (frame: Frame): Frame => ({ ...frame, data: frame.data.slice() });
const detachedEntry = (entry: SignatureEntry): SignatureEntry => ({
  ...entry,
  msg: entry.msg?.slice(),
  signature: entry.signature.slice(),
});

export interface WorkPool {
  /** Throws a Refusal for a bad entry, PoolBusy when the queue is full. */
  verify(tx: SignedFrames): Promise<void>;
  /** Throws a Refusal when the prefix breaks a rule, Unavailable when the EL cannot be read, PoolBusy. */
  simulate(task: SimulateTask): Promise<void>;
  close(): Promise<void>;
}

/** Threads by default: every core but one for the event loop, at least one, at most four. */
export const defaultThreads = () => Math.max(1, Math.min(4, availableParallelism() - 1));

export function createWorkPool(threads: number, maxQueue: number, settings: PoolSettings): WorkPool {
  // Started on the first task: most ingresses of a test suite never send one.
  let pool: Piscina | undefined;
  const run = async (task: unknown, name: 'verify' | 'simulate') => {
    pool ??= new Piscina({
      filename: new URL('./pool-worker.js', import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.MAX_SAFE_INTEGER,
      // A simulation mostly waits on EL reads the first time a head is seen: a thread takes
      // others meanwhile (signature checks are synchronous and run one at a time regardless).
      concurrentTasksPerWorker: CONCURRENT_TASKS_PER_THREAD,
      workerData: settings,
    });
    // The one bound on waiting tasks (piscina's own maxQueue would reject with a plain Error).
    if (pool.queueSize >= maxQueue) throw new PoolBusy('the gate pool is at capacity');
    const answer = (await pool.run(task, { name })) as object | undefined;
    if (answer !== undefined && 'refusal' in answer) {
      const { reason, detail, extra, dependencies } = (answer as PoolRefusal).refusal;
      const refusal = new Refusal(reason, detail, extra);
      refusal.dependencies = dependencies;
      throw refusal;
    }
    if (answer !== undefined && 'unavailable' in answer) throw new Unavailable((answer as PoolUnavailable).unavailable);
    return answer;
  };
  return {
    async verify(tx) {
      const inline = tx.signatures.length <= INLINE_SECP256K1_MAX && tx.signatures.every((e) => INLINE_SCHEMES.has(e.scheme));
      if (inline) return verifyFrameSignatures(tx);
      await run({ sender: tx.sender, sigHash: tx.sigHash, signatures: tx.signatures.map(detachedEntry) }, 'verify');
    },
    async simulate(task) {
      const tx = { ...task.tx, frames: task.tx.frames.map(detachedFrame), signatures: task.tx.signatures.map(detachedEntry) };
      await run({ ...task, tx }, 'simulate');
    },
    async close() {
      const running = pool;
      pool = undefined;
      await running?.destroy();
    },
  };
}
