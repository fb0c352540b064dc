/**
 * Issue 25's N1 scenario, shared by test/e2e/metered-work.test.ts and bench/metered.ts: sources
 * flooding frame transactions whose VERIFY code STATICCALLs a 24,576-byte contract in a loop
 * (allowed code, out of gas at the end; the dearest prefix measured, ~100-150 ms of compute, where
 * the audit's EXTCODEHASH loop cost ~1 s before code was hashed once), each at its sustained
 * submission quota, while another source sends ML-DSA-65 transfers.
 */
import { keccak256 } from 'ethers';
import { readdirSync, readFileSync } from 'node:fs';
import { type Dispatcher, Pool, request } from 'undici';
import { encodeFrameTx, mldsaAccount, RECIPIENT, selfTransfer, signed, type FrameTxFields } from './frames.js';
import { call } from './http.js';
import { bigContract, staticCallLoop } from './verify-code.js';

const ONE_ETH = '0xde0b6b3a7640000';
const MLDSA65 = 0x65;
const BIG = '0x00000000000000000000000000000000000b1600';
/** Senders each flooding source sends from in turn: a sender may have one frame transaction in flight. */
const SENDERS_EACH = 16;

export interface Answer {
  readonly result?: string;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: { reason?: string; retry_after_ms?: number } };
}

/** POSTs one eth_sendRawTransaction through `dispatcher` (a client on its own local address). */
export async function submitFrom(dispatcher: Dispatcher, url: string, raw: string): Promise<{ status: number; answer: Answer }> {
  const reply = await request(url, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
  });
  return { status: reply.statusCode, answer: JSON.parse(await reply.body.text()) as Answer };
}

/** A smart account's transfer: [VERIFY flags 3 → its code, SENDER → RECIPIENT], `salt` in the VERIFY data (distinct bytes). */
export const smartTransfer = (sender: string, verifyGas: bigint, salt: number): string =>
  encodeFrameTx({
    sender,
    frames: [
      { mode: 1, flags: 3, executionGas: verifyGas, data: `0x${salt.toString(16).padStart(64, '0')}` },
      { mode: 2, flags: 0, target: RECIPIENT, executionGas: 21_000n },
    ],
    signatures: [],
    fees: [0n, 2_000_000_000n, 0n],
  } satisfies FrameTxFields);

const senderOf = (source: number, n: number) =>
  `0x${(0xa77ac0de0000 + source * 0x100 + (n % SENDERS_EACH)).toString(16).padStart(40, '0')}`;

/** Puts the 24 KB contract and every flooding sender (the loop as its code, funded) on the EL, for `sources` sources. */
export async function placeCostlyAccounts(elUrl: string, sources: number): Promise<void> {
  await call(elUrl, 'anvil_setCode', [BIG, bigContract(0)]);
  for (let source = 0; source < sources; source++) {
    for (let n = 0; n < SENDERS_EACH; n++) {
      await call(elUrl, 'anvil_setCode', [senderOf(source, n), staticCallLoop(BIG)]);
      await call(elUrl, 'anvil_setBalance', [senderOf(source, n), ONE_ETH]);
    }
  }
  await call(elUrl, 'evm_mine', []);
}

let salt = 0;

/**
 * Sources 127.0.0.1 ... each send costly frame transactions at the shipped sustained quota (a
 * burst of five, then one a second), never waiting for answers, until `stop()` disconnects them
 * with their requests in flight. Outcomes counted by HTTP status and reason.
 */
export function floodCostlyVerify(url: string, sources: number) {
  const pools = Array.from({ length: sources }, (_, i) => new Pool(url, { connections: 16, localAddress: `127.0.0.${i + 1}` }));
  const outcomes = new Map<string, number>();
  const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
  const sent = Array.from({ length: sources }, () => 0);
  const send = (i: number) => {
    submitFrom(pools[i]!, url, smartTransfer(senderOf(i, sent[i]!++), 99_000n, salt++)).then(
      ({ status, answer }) => count(`${status} ${answer.error?.data?.reason ?? answer.error?.message ?? 'admitted'}`),
      () => count('disconnected'),
    );
  };
  for (let i = 0; i < sources; i++) for (let j = 0; j < 5; j++) send(i);
  const timer = setInterval(() => {
    for (let i = 0; i < sources; i++) send(i);
  }, 1_000);
  return {
    outcomes,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(pools.map((pool) => pool.destroy()));
    },
  };
}

/** `count` ML-DSA-65 transfers from fresh accounts funded on the EL, signed ahead. */
export async function fundedMldsaTransfers(elUrl: string, count: number): Promise<string[]> {
  const accounts = Array.from({ length: count }, () => mldsaAccount());
  for (const account of accounts) await call(elUrl, 'anvil_setBalance', [account.address, ONE_ETH]);
  await call(elUrl, 'evm_mine', []);
  return accounts.map((account) => signed(selfTransfer(account.address, MLDSA65), [account.sign]));
}

/**
 * Sends each transfer in turn, `gapMs` apart, from `victims` in turn (each a client on its own
 * address, within its quota); each must be admitted. Latencies in ms, sorted.
 */
export async function victimLatencies(victims: readonly Dispatcher[], url: string, raws: readonly string[], gapMs = 0): Promise<number[]> {
  const latencies: number[] = [];
  for (const [i, raw] of raws.entries()) {
    if (i > 0 && gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    const started = performance.now();
    const { answer } = await submitFrom(victims[i % victims.length]!, url, raw);
    latencies.push(performance.now() - started);
    const expected = keccak256(raw);
    if (answer.result !== expected) throw new Error(`the victim's transfer was not admitted: ${JSON.stringify(answer)}`);
  }
  return latencies.sort((a, b) => a - b);
}

/** The 90th percentile of sorted values. */
export const p90 = (sorted: readonly number[]) => sorted[Math.ceil(sorted.length * 0.9) - 1]!;

/** CPU seconds a process and its children (the workers of `workers: N`) have used, every thread, from /proc. */
export function cpuSecondsOf(pid: number): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // Fields after the command (which may hold spaces): state, ppid, ..., utime (12th), stime (13th).
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    if (Number(entry) === pid || Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

/** CPU seconds `pid` used in each of the next `count` seconds. */
export async function cpuEachSecond(pid: number, count: number): Promise<number[]> {
  const seconds: number[] = [];
  for (let last = cpuSecondsOf(pid); seconds.length < count; ) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = cpuSecondsOf(pid);
    seconds.push(now - last);
    last = now;
  }
  return seconds;
}
