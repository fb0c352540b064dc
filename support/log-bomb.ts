/**
 * A block whose eth_getLogs answer is ~14 MB, for streaming tests and the streaming bench: a
 * contract creation whose init code emits LOG_COUNT logs. Also the memory reader those use.
 */
import { readFileSync } from 'node:fs';
import { Wallet } from 'ethers';
import { CHAIN_ID } from '../devnet/anvil.js';
import { DEV_ADDRESS, DEV_KEY } from './keys.js';
import { call, receiptOf } from './http.js';

/** ~28,000 LOG1 × ~1,050 gas ≈ 29.5M gas: under the 60M block gas limit of spec section 1. */
export const LOG_COUNT = 28_000;
const LOG_BOMB_GAS_LIMIT = 40_000_000n;

/**
 * Init code, hand-assembled; it returns no runtime code.
 *
 *   0  PUSH2 LOG_COUNT        counter
 *   3  JUMPDEST               loop:
 *   4  DUP1 PUSH1 0 MSTORE      mem[0..32] = counter
 *   8  DUP1 PUSH1 32 PUSH1 0    topic0 = counter, size 32, offset 0
 *  13  LOG1
 *  14  PUSH1 1 SWAP1 SUB        counter - 1
 *  18  DUP1 PUSH1 3 JUMPI       while counter != 0
 *  22  STOP
 */
function logBombInitCode(count: number): string {
  if (count < 1 || count > 0xffff) throw new Error(`log count ${count} does not fit PUSH2`);
  const code = ['61', count.toString(16).padStart(4, '0'), '5b', '80600052', '8060206000a1', '60019003', '8060035700'];
  return `0x${code.join('')}`;
}

/** Signs with anvil's account 0 and sends straight to anvil (the gate is not under test here). */
export async function mineLogBomb(elUrl: string): Promise<string> {
  const [nonce, gasPrice] = await Promise.all([
    call<string>(elUrl, 'eth_getTransactionCount', [DEV_ADDRESS, 'pending']),
    call<string>(elUrl, 'eth_gasPrice'),
  ]);
  const raw = await new Wallet(DEV_KEY).signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce: Number(nonce),
    to: null,
    data: logBombInitCode(LOG_COUNT),
    gasLimit: LOG_BOMB_GAS_LIMIT,
    maxFeePerGas: BigInt(gasPrice) * 2n + 1_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
  const hash = await call<string>(elUrl, 'eth_sendRawTransaction', [raw]);
  const receipt = await receiptOf<{ status: string; blockNumber: string }>(elUrl, hash, 20_000);
  if (receipt.status !== '0x1') throw new Error(`the log bomb reverted (status ${receipt.status})`);
  return receipt.blockNumber;
}

/** Peak and current resident set of a process, in KiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { hwmKiB: number; rssKiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (!match) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(match[1]);
  };
  return { hwmKiB: field('VmHWM'), rssKiB: field('VmRSS') };
}
