/**
 * Runs in a worker thread of the signature pool (signature-pool.ts): verifies one frame
 * transaction's entries and answers the refusal, if any, as plain data.
 */
import { Refusal } from './refusal.js';
import { verifyFrameSignatures, type SignedFrames } from './signatures.js';

export interface PoolRefusal {
  readonly reason: string;
  readonly detail: string;
}

export default function verify(tx: SignedFrames): PoolRefusal | undefined {
  try {
    verifyFrameSignatures(tx);
    return undefined;
  } catch (err) {
    if (err instanceof Refusal) return { reason: err.reason, detail: err.detail };
    throw err;
  }
}
