/**
 * The gate's expensive work off the event loop, in worker threads (piscina):
 *
 * - frame signature entries: up to 14 P256 or 11 ML-DSA-65 fit the prefix budget, 25-40 ms of
 *   CPU. Done on the event loop, a source sending them at its quota stalled every other request
 *   (an `eth_chainId` median of ~2 ms rose to ~500 ms). Entries that are only SECP256K1 (native
 *   libsecp256k1, ~50 µs each) or ARBITRARY, a handful at most, are checked in place: cheaper
 *   than the hop to a thread;
 * - validation-prefix simulation in the embedded EVM (up to 100,000 gas of account code);
 * - frame transactions' gas estimates (svc_estimateFrameGas: whole transactions, up to
 *   `estimate_budget_ms` each), on a lane of their own so that no submission's simulation ever
 *   waits behind an estimate.
 *
 * Served fairly (issue 25): each kind has its own lane, threads and queue, so that a signature
 * check never waits behind a simulation; a thread runs one task at a time, and the lane hands it
 * the next only when it is free, so what waits, waits here, where it is served round-robin by
 * source (src/fair-queue.ts): one source's backlog delays another's task by at most one of its own.
 * A task whose client has gone is dropped before it runs. Each task's time in its thread (a
 * simulation's compute, less its waits for EL reads) is reported to the job (`spent`), so that
 * the source pays for what its work measured.
 *
 * Queues are bounded, per source and in total: past either the submission is refused like a
 * dry bucket (-32005, the source's or the endpoint's), never queued without end.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { FairQueue } from '../../../src/plugin.js';
import {
  cryptoBackend,
  type Frame,
  type SignatureEntry,
  type SignedFrames,
  type StateDependencies,
  verifyFrameSignatures,
} from '../../../protocol/index.js';
import type { RecoverTask } from '../submission/decode.js';
import type {
  AuthoritiesTask,
  EstimateAnswer,
  PoolRefusal,
  PoolSettings,
  PoolUnavailable,
  SimulateAnswer,
  SimulateTask,
} from './pool-worker.js';
import type { EstimateOutcome, EstimateTask } from './simulation/estimate.js';
import { Abandoned, PoolBusy, Refusal, Unavailable } from '../errors.js';
import type { Timed } from './timed-worker.js';

/**
 * Up to four SECP256K1 entries are checked on the event loop (~70 µs each natively: a thread
 * hop costs more); with the pure-JS fallback (~1.7 ms each, crypto-backend.ts) every check goes
 * to the pool.
 */
const INLINE_SECP256K1_MAX = cryptoBackend.kind === 'native' ? 4 : 0;
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

/** Whose task it is, and what becomes of it. */
export interface PoolJob {
  /** The source it is counted against: lanes serve sources in turn. */
  readonly source: string;
  /** True once nobody waits for the answer (the client left): a queued task is then dropped. */
  readonly gone: () => boolean;
  /** What the task cost, whatever its outcome: a simulation's compute, a signature check's time in its thread (ms). */
  readonly spent: (ms: number) => void;
}

export interface PoolLimits {
  /** Threads of each lane. */
  readonly threads: number;
  /** Tasks that may wait in each lane, in all and per source. */
  readonly queueMax: number;
  readonly queuePerSource: number;
}

export interface WorkPool {
  /** Throws a Refusal for a bad entry, PoolBusy when a queue is full, Abandoned for a client gone. */
  verify(tx: SignedFrames, job: PoolJob): Promise<void>;
  /** Throws a Refusal when the prefix breaks a rule, Unavailable when the EL cannot be read, PoolBusy, Abandoned. */
  /** Admitted: what the simulation read (its dependencies); refused: throws the Refusal. */
  simulate(task: SimulateTask, job: PoolJob): Promise<StateDependencies>;
  /** A standard transaction's sender, recovered in a thread of the verify lane; undefined for none. */
  recover(task: RecoverTask, job: PoolJob): Promise<string | undefined>;
  /** A type 0x04 transaction's authorities, recovered in a thread of the verify lane (PoolBusy, Abandoned). */
  authorities(task: AuthoritiesTask, job: PoolJob): Promise<string[]>;
  /** A frame transaction's gas estimate, in a thread of the estimate lane; Unavailable, PoolBusy, Abandoned. */
  estimate(task: EstimateTask, job: PoolJob): Promise<EstimateOutcome>;
  close(): Promise<void>;
}

/** Threads by default: every core but one for the event loop, at least one, at most four. */
export const defaultThreads = () => Math.max(1, Math.min(4, availableParallelism() - 1));

type LaneName = 'verify' | 'simulate' | 'estimate';

interface Waiting {
  readonly job: PoolJob;
  readonly task: unknown;
  /** The thread's function (timed-worker.ts): the lane's own, or `recover` on the verify lane. */
  readonly fn: string;
  readonly resolve: (answer: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/** One kind of task: its own threads, started on the first task, and its own fair queue. */
class Lane {
  private threads: Piscina | undefined;
  private running = 0;
  private readonly queue: FairQueue<Waiting>;

  constructor(
    private readonly name: LaneName,
    private readonly limits: PoolLimits,
    private readonly settings: PoolSettings,
  ) {
    this.queue = new FairQueue(limits.queuePerSource, limits.queueMax);
  }

  run(job: PoolJob, task: unknown, fn: string = this.name): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { job, task, fn, resolve, reject };
      let full = this.queue.push(job.source, waiting);
      // Room held by clients that have left is given back before anyone is refused.
      if (full !== undefined && this.dropGone() > 0) full = this.queue.push(job.source, waiting);
      if (full !== undefined) return reject(new PoolBusy(`the gate's ${this.name} queue is full`, full === 'source' ? 'source' : 'host'));
      this.pump();
    });
  }

  async close(): Promise<void> {
    const threads = this.threads;
    this.threads = undefined;
    for (const waiting of this.queue.drop(() => true)) waiting.reject(new Abandoned());
    await threads?.destroy();
  }

  /** Hands waiting tasks to free threads, one task per thread. */
  private pump(): void {
    while (this.running < this.limits.threads) {
      const waiting = this.queue.next();
      if (waiting === undefined) return;
      if (waiting.job.gone()) {
        waiting.reject(new Abandoned());
        continue;
      }
      this.start(waiting);
    }
  }

  private start({ job, task, fn, resolve, reject }: Waiting): void {
    this.threads ??= new Piscina({
      filename: new URL('./timed-worker.js', import.meta.url).href,
      minThreads: this.limits.threads,
      maxThreads: this.limits.threads,
      idleTimeout: Number.MAX_SAFE_INTEGER,
      // One at a time: two CPU-bound tasks on one thread only take turns, and the lane's queue,
      // not the thread's, is where waiting is fair.
      concurrentTasksPerWorker: 1,
      workerData: { ...this.settings, lane: this.name },
    });
    this.running++;
    (this.threads.run(task, { name: fn }) as Promise<Timed<unknown>>)
      .then(({ answer, ms }) => {
        // A simulation's own meter leaves out its waits for EL reads: a slow EL (another
        // source's heavy reads, say) must not put this source in debt.
        const computeMs = (answer as Partial<SimulateAnswer> | undefined)?.computeMs;
        job.spent(typeof computeMs === 'number' ? computeMs : ms);
        resolve(answer);
      }, reject)
      .finally(() => {
        this.running--;
        this.pump();
      });
  }

  private dropGone(): number {
    const gone = this.queue.drop((waiting) => waiting.job.gone());
    for (const waiting of gone) waiting.reject(new Abandoned());
    return gone.length;
  }
}

/**
 * `onBug` hears of an unexpected error inside a simulation (its class, message and where), which
 * the thread has already turned into a classified refusal: for the log, never for the client.
 */
const NOTHING_READ: StateDependencies = { accounts: [], codes: [], slots: [] };

export function createWorkPool(limits: PoolLimits, settings: PoolSettings, onBug: (bug: string) => void = () => {}): WorkPool {
  const lanes = {
    verify: new Lane('verify', limits, settings),
    simulate: new Lane('simulate', limits, settings),
    estimate: new Lane('estimate', limits, settings),
  };
  const run = async (name: LaneName, job: PoolJob, task: unknown, fn?: string) => {
    const answer = (await lanes[name].run(job, task, fn)) as object | string | undefined;
    // A recovered sender is a string: nothing more to look at.
    if (typeof answer !== 'object') return answer;
    if ('bug' in answer) onBug((answer as SimulateAnswer).bug!);
    if ('refusal' in answer && (answer as PoolRefusal).refusal !== undefined) {
      const { reason, detail, extra, dependencies } = (answer as PoolRefusal).refusal;
      const refusal = new Refusal(reason, detail, extra);
      refusal.dependencies = dependencies;
      throw refusal;
    }
    if ('unavailable' in answer && (answer as PoolUnavailable).unavailable !== undefined)
      throw new Unavailable((answer as PoolUnavailable).unavailable);
    return answer;
  };
  return {
    async verify(tx, job) {
      const inline = tx.signatures.length <= INLINE_SECP256K1_MAX && tx.signatures.every((e) => INLINE_SCHEMES.has(e.scheme));
      if (inline) return verifyFrameSignatures(tx);
      await run('verify', job, { sender: tx.sender, sigHash: tx.sigHash, signatures: tx.signatures.map(detachedEntry) });
    },
    async simulate(task, job) {
      const tx = { ...task.tx, frames: task.tx.frames.map(detachedFrame), signatures: task.tx.signatures.map(detachedEntry) };
      const answer = (await run('simulate', job, { ...task, tx })) as SimulateAnswer;
      return answer.dependencies ?? NOTHING_READ;
    },
    async recover({ digest, r, s, yParity }, job) {
      // Their own bytes: views of the raw transaction would send all of it.
      return (await run('verify', job, { digest: digest.slice(), r: r.slice(), s: s.slice(), yParity }, 'recover')) as string | undefined;
    },
    async authorities({ bytes, chainId }, job) {
      return (await run('verify', job, { bytes: bytes.slice(), chainId }, 'authorities')) as string[];
    },
    async estimate({ request, block }, job) {
      const tx = { ...request.tx, frames: request.tx.frames.map(detachedFrame), signatures: request.tx.signatures.map(detachedEntry) };
      return (await run('estimate', job, { request: { ...request, tx }, block })) as EstimateAnswer as EstimateOutcome;
    },
    async close() {
      await Promise.all([lanes.verify.close(), lanes.simulate.close(), lanes.estimate.close()]);
    },
  };
}
