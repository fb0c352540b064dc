/**
 * A contract that emits one log per call, for the logs-subscription tests and bench: LOG2 with
 * topic0 `EMITTED` and topic1 the call's first 32 bytes of calldata, no data. Sent from anvil's
 * unlocked account 0 straight to anvil (the gate is not what these measure).
 */
import { call, receiptOf } from './http.js';
import { DEV_ADDRESS } from './keys.js';

/** The emitter's topic0: any fixed 32 bytes serve. */
export const EMITTED = `0x${'e0'.repeat(32)}`;

/**
 * Runtime (42 bytes, hand-assembled):
 *   PUSH1 0 CALLDATALOAD       topic1 = calldata[0..32]
 *   PUSH32 EMITTED             topic0
 *   PUSH1 0 PUSH1 0 LOG2 STOP  no data
 * Init code: CODECOPY the runtime (at offset 12) to memory 0 and RETURN it.
 */
const RUNTIME = `600035 7f${EMITTED.slice(2)} 6000 6000 a2 00`.replace(/ /g, '');
export const EMITTER_INIT = `0x602a600c600039 602a6000f3 ${RUNTIME}`.replace(/ /g, '');

/** Deploys an emitter; returns its address (lower case). */
export async function deployEmitter(elUrl: string): Promise<string> {
  const hash = await call<string>(elUrl, 'eth_sendTransaction', [{ from: DEV_ADDRESS, data: EMITTER_INIT }]);
  const receipt = await receiptOf<{ contractAddress: string; status: string }>(elUrl, hash);
  if (receipt.status !== '0x1') throw new Error('the emitter was not deployed');
  return receipt.contractAddress.toLowerCase();
}

/** The calldata (and so topic1) of the `n`th emission. */
export const topicOf = (n: number | bigint): string => `0x${n.toString(16).padStart(64, '0')}`;

/** Has `emitter` emit `topicOf(n)`; returns the transaction's hash once it is sent. */
export function emit(elUrl: string, emitter: string, n: number | bigint): Promise<string> {
  return call<string>(elUrl, 'eth_sendTransaction', [{ from: DEV_ADDRESS, to: emitter, data: topicOf(n), gas: '0x30000' }]);
}
