/**
 * The entry of the gate pool's threads (work-pool.ts): runs pool-worker.ts's tasks and reports,
 * with each answer, the milliseconds it held the thread, measured in the thread. Measured in
 * the main thread, the first task of a lane would also pay for starting the thread; a thread of
 * the simulation and estimate lanes loads the EVM and its curve libraries as it starts, before its first task,
 * and one of the verify lane builds the pure-JS recovery's tables (when that runs), for the same
 * reason.
 */
import { workerData } from 'node:worker_threads';
import {
  authorities as authoritiesTask,
  type AuthoritiesTask,
  estimate as estimateTask,
  loadSimulator,
  recover as recoverTask,
  simulate as simulateTask,
  verify as verifyTask,
  type SimulateTask,
} from './pool-worker.js';
import type { EstimateTask } from './simulation/estimate.js';
import type { RecoverTask } from '../submission/decode.js';
import { type SignedFrames, warmRecovery } from '../../../protocol/index.js';

export interface Timed<T> {
  readonly answer: T;
  readonly ms: number;
}

const lane = (workerData as { lane?: string } | undefined)?.lane;
if (lane === 'simulate' || lane === 'estimate') await loadSimulator();
else warmRecovery();

async function timed<T>(task: () => T | Promise<T>): Promise<Timed<T>> {
  const started = performance.now();
  const answer = await task();
  return { answer, ms: performance.now() - started };
}

export const verify = (tx: SignedFrames) => timed(() => verifyTask(tx));
export const recover = (task: RecoverTask) => timed(() => recoverTask(task));
export const authorities = (task: AuthoritiesTask) => timed(() => authoritiesTask(task));
export const simulate = (task: SimulateTask) => timed(() => simulateTask(task));
export const estimate = (task: EstimateTask) => timed(() => estimateTask(task));
