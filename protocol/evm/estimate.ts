/**
 * Per-frame gas estimation for a frame transaction (`svc_estimateFrameGas`): the limits each
 * frame needs to succeed, found by running the whole transaction with the chain's frame runner
 * (execute.ts) over a block's state, as `eth_estimateGas` finds one call's by running it.
 *
 * 1. Every limit the request left out is generous: the execution gas the transaction may still
 *    carry under EIP-7825's cap, shared among those frames, and a state-gas pool no frame fills.
 *    A frame that fails then fails whatever its limits: the answer names it (and a revert's data).
 * 2. Each such limit is set to what its frame used, and the transaction run again. A frame that
 *    now fails needs more than it used (a call keeps 1/64 of its gas back, a loop may read GAS):
 *    its limit is searched for, upwards by doubling then by halving, to within 1/64, with the
 *    frames after it generous; then the whole transaction is run again, until every frame succeeds.
 *
 * The search runs at gas price 0 on a block with base fee 0 (a generous limit's max cost would
 * otherwise be more than the payer holds); a request with fees is then run once at them, so that
 * a payer who cannot cover the estimate's max cost is told so. Signatures are not verified (their
 * stand-ins are only the right length: frame-request.ts): default code and SIGPARAM read an
 * entry's scheme, signer and msg, never its bytes.
 */
import { frameGas, TRANSACTION_EXECUTION_CAP } from '../frame-checks.js';
import type { FrameTransaction } from '../frame-codec.js';
import type { FrameGasRequest } from '../frame-request.js';
import { type ExecutedFrameTransaction, type FrameFailure, InvalidFrameTransaction } from './execute.js';
import type { ExecutionBlock } from './frame-runner.js';

/** A state-gas pool far past what a frame can write with the execution gas it may carry. */
const GENEROUS_STATE_GAS = 1n << 40n;
/** The search stops once the limit is known to within this fraction of it. */
const PRECISION = 64n;
/** The first step up from a limit that failed: a call's stipend and then some. */
const FIRST_STEP = 5_000n;

export interface FrameGasEstimate {
  readonly frames: readonly { readonly executionGas: bigint; readonly stateGas: bigint }[];
  /** What the transaction may use in all with those limits: EIP-8141's max gas. */
  readonly gas: bigint;
}

/** Runs `tx` in `block` over a fresh view of the block's state; throws InvalidFrameTransaction. */
export type RunFrameTransaction = (tx: FrameTransaction, block: ExecutionBlock) => Promise<ExecutedFrameTransaction>;

/** Why no estimate: the frame that fails (and a revert's data), or why the transaction cannot run. */
export class FrameEstimateError extends Error {
  constructor(
    message: string,
    readonly frame?: number,
    /** A revert's return data (0x hex): answered as `eth_estimateGas` answers a revert. */
    readonly output?: string,
  ) {
    super(message);
    this.name = 'FrameEstimateError';
  }
}

interface Limits {
  executionGas: bigint;
  stateGas: bigint;
}

type Outcome = { readonly ran: ExecutedFrameTransaction } | { readonly failed: number; readonly failure: FrameFailure };

const MODE_NAMES = ['DEFAULT', 'VERIFY', 'SENDER'];

export async function estimateFrameGas(
  request: FrameGasRequest,
  block: ExecutionBlock,
  run: RunFrameTransaction,
  checkBudget: () => void = () => {},
): Promise<FrameGasEstimate> {
  const { tx, unknown } = request;
  const unpriced = { ...tx, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n };
  const free = { ...block, baseFee: 0n };
  const attempt = async (limits: readonly Limits[], priced = false): Promise<Outcome> => {
    checkBudget();
    const frames = tx.frames.map((frame, i) => ({ ...frame, ...limits[i]! }));
    try {
      return { ran: await run({ ...(priced ? tx : unpriced), frames }, priced ? block : free) };
    } catch (err) {
      if (!(err instanceof InvalidFrameTransaction)) throw err;
      if (err.verify === undefined) throw new FrameEstimateError(`the transaction cannot be included: ${err.message}`);
      return { failed: err.verify.frame, failure: err.verify };
    }
  };
  const firstFailure = (outcome: Outcome): { failed: number; failure: FrameFailure } | undefined => {
    if ('failed' in outcome) return outcome;
    const failed = outcome.ran.frames.findIndex((frame) => frame.status === 0);
    return failed < 0 ? undefined : { failed, failure: outcome.ran.failures[failed]! };
  };
  const fails = (failed: number, failure: FrameFailure, why?: string): FrameEstimateError => {
    const detail = failure.detail === undefined ? '' : `: ${failure.detail}`;
    const name = `frame ${failed} (${MODE_NAMES[tx.frames[failed]!.mode]})`;
    return new FrameEstimateError(why ?? `${name} ${failure.cause}${detail}`, failed, failure.output);
  };

  const generous = generousLimits(tx, unknown);
  const first = await attempt(generous);
  const firstFailed = firstFailure(first);
  if (firstFailed !== undefined) {
    const { failed, failure } = firstFailed;
    const gasless = failure.cause === 'out of gas' && unknown[failed]!.executionGas;
    throw fails(
      failed,
      failure,
      gasless
        ? `frame ${failed} (${MODE_NAMES[tx.frames[failed]!.mode]}) runs out of gas with ${generous[failed]!.executionGas}, all the transaction may carry`
        : undefined,
    );
  }
  const used = (first as { ran: ExecutedFrameTransaction }).ran.frames;
  const limits: Limits[] = generous.map((limit, i) => ({
    executionGas: unknown[i]!.executionGas ? used[i]!.executionGas : limit.executionGas,
    stateGas: unknown[i]!.stateGas ? used[i]!.stateGas : limit.stateGas,
  }));

  // Each pass either ends, or raises one frame's limit for good: at most two per frame.
  for (let pass = 0; ; pass++) {
    const failedNow = firstFailure(await attempt(limits));
    if (failedNow === undefined) break;
    const { failed, failure } = failedNow;
    if (pass > 2 * tx.frames.length) throw fails(failed, failure);
    const raised = await raise(failed, failure);
    if (!raised) throw fails(failed, failure);
  }
  if (tx.maxFeePerGas > 0n) {
    const pricedFailure = firstFailure(await attempt(limits, true));
    if (pricedFailure !== undefined) throw fails(pricedFailure.failed, pricedFailure.failure);
  }
  const final = tx.frames.map((frame, i) => ({ ...frame, ...limits[i]! }));
  return { frames: limits.map((limit) => ({ ...limit })), gas: frameGas({ ...tx, frames: final }).maxGas };

  /** Raises frame `k`'s limits (those left out, below generous) until it succeeds; false if nothing can. */
  async function raise(k: number, failure: FrameFailure): Promise<boolean> {
    const order: Array<keyof Limits> = failure.cause === 'out of state gas' ? ['stateGas', 'executionGas'] : ['executionGas', 'stateGas'];
    const candidates = order.filter((key) => unknown[k]![key] && limits[k]![key] < generous[k]![key]);
    if (candidates.length === 0) return false;
    // Frame k alone is searched: the frames before it keep their limits, those after are generous.
    const passes = async (key: keyof Limits, value: bigint): Promise<boolean> => {
      const trial = limits.map((limit, i) => (i < k ? limit : i > k ? generous[i]! : { ...limit, [key]: value }));
      const failedAt = firstFailure(await attempt(trial));
      return failedAt === undefined || failedAt.failed > k;
    };
    for (const key of candidates) {
      const top = generous[k]![key];
      if (!(await passes(key, top))) {
        // Not this limit alone: keep it generous while the next one is tried.
        limits[k]![key] = top;
        continue;
      }
      let low = limits[k]![key];
      let high = low + FIRST_STEP < top ? low + FIRST_STEP : top;
      while (high < top && !(await passes(key, high))) {
        low = high;
        high = high * 2n < top ? high * 2n : top;
      }
      while (high - low > (high / PRECISION > 1n ? high / PRECISION : 1n)) {
        const middle = (low + high) / 2n;
        if (await passes(key, middle)) high = middle;
        else low = middle;
      }
      limits[k]![key] = high;
      return true;
    }
    return false;
  }
}

/** The limits of a run where nothing left out can run short. */
function generousLimits(tx: FrameTransaction, unknown: FrameGasRequest['unknown']): Limits[] {
  const open = unknown.filter((u) => u.executionGas).length;
  const { intrinsic } = frameGas(tx);
  const given = tx.frames.reduce((sum, frame, i) => (unknown[i]!.executionGas ? sum : sum + frame.executionGas), 0n);
  const room = TRANSACTION_EXECUTION_CAP - intrinsic - given;
  if (open > 0 && room < BigInt(open)) {
    throw new FrameEstimateError(
      `the frames' given execution gas (${given}) and the intrinsic gas (${intrinsic}) leave nothing under the cap of ${TRANSACTION_EXECUTION_CAP} for the others`,
    );
  }
  const share = open === 0 ? 0n : room / BigInt(open);
  return tx.frames.map((frame, i) => ({
    executionGas: unknown[i]!.executionGas ? share : frame.executionGas,
    stateGas: unknown[i]!.stateGas ? GENEROUS_STATE_GAS : frame.stateGas,
  }));
}
