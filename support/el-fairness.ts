/**
 * Issue 25, item 3 (row N2), and issue 34, row A1: one source floods the EL with gas-heavy reads
 * while another reads balances, calls, estimates and submits ECDSA transfers, through the ingress
 * (its own process, the shipped production chain, a real anvil). Shared by
 * test/e2e/el-fairness.test.ts and bench/el-fairness.ts.
 *
 * The attacker (from its own address, or spread over several) runs `concurrency` clients, each sending its request again as soon as
 * it is answered, or `backoffMs` after a refusal (not the Retry-After it checks is there): by
 * default at once.
 * The victim (127.0.0.2) sends eth_getBalance one at a time; beside it, one at a time, what a dapp
 * and a wallet send before a transaction: an eth_call naming 30,000 gas, a gasless eth_call of a
 * view, a gasless eth_estimateGas of a transfer; and one signed transfer every SUBMISSION_GAP_MS
 * (within its submission quota), alternately legacy and EIP-1559.
 */
import { Transaction, Wallet } from 'ethers';
import { Pool } from 'undici';
import { CHAIN } from '../protocol/index.js';
import { DEV_KEYS } from './keys.js';
import { precompileLoop } from './verify-code.js';

/**
 * KECCAK256 of 32 bytes in a loop while more than 100,000 gas is left, then STOP: the most hashing
 * a call's gas buys, and a clean empty result.
 *   0: JUMPDEST PUSH1 32 PUSH1 0 KECCAK256 POP GAS PUSH3 100000 LT PUSH1 0 JUMPI STOP
 */
export const KECCAK_LOOP_CODE = '0x5b6020600020505a620186a01060005700';
export const LOOP_ADDRESS = '0x00000000000000000000000000000000000c0de1';
/** STATICCALLs of BLAKE2F (0x09) at 65,536 rounds until the gas is gone: ~2.5 times the hashing loop's EL time per gas. */
export const BLAKE2F_ADDRESS = '0x00000000000000000000000000000000000c0de2';
const BLAKE2F_LOOP_CODE = precompileLoop(9, `00010000${'00'.repeat(208)}01`);
/**
 * A view whose cost hangs on its calldata past the selector, as a multicall's or a router's does:
 * it returns 32 zero bytes, unless the word after the selector is not zero, then runs the hashing
 * loop above.
 *   0: PUSH1 4 CALLDATALOAD PUSH1 11 JUMPI PUSH1 32 PUSH1 0 RETURN
 *  11: JUMPDEST PUSH1 32 PUSH1 0 KECCAK256 POP GAS PUSH3 100000 LT PUSH1 11 JUMPI STOP
 */
export const VIEW_ADDRESS = '0x00000000000000000000000000000000000c0de3';
const VIEW_CODE = '0x600435600b5760206000f35b6020600020505a620186a010600b5700';
/** The victim's view call's selector. */
const VIEW_SELECTOR = '0x70a08231';
export const MAX_GAS = 50_000_000;
const hex = (n: number) => `0x${n.toString(16)}`;

export const VICTIM = '127.0.0.2';
const SUBMISSION_GAP_MS = 150;
const READ_GAP_MS = 10;
/** Within the read quota beside the balances: a gasless call or estimate costs 5 tokens. */
const CALL_GAP_MS = 30;
const RECIPIENT = '0x000000000000000000000000000000000000bEEF';

/**
 * The edit both the e2e and the bench make to the shipped chain: anvil's block clock runs on its
 * own, so a transfer reaching it just as a block seals lands in the next but one, after the gate
 * counted it skipped (skip_after_blocks 1); with contiguous nonces the victim's next transfer
 * would be refused for that, which is not what they measure.
 */
export const NONCES_NOT_CONTIGUOUS = ['contiguous_nonces: true', 'contiguous_nonces: false'] as const;

/** A trusted proxy on loopback (issue 34, row F1): its clients are named by X-Forwarded-For. */
export const PROXY = '127.0.0.8';
export const TRUSTED_PROXY = ['trusted_proxies: []', `trusted_proxies: ['${PROXY}']`] as const;

export const rpcBody = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/** Places the loops' and the view's code on the EL (anvil_setCode, straight to anvil). */
export async function placeLoop(anvilUrl: string): Promise<void> {
  const pool = new Pool(anvilUrl, { connections: 1 });
  try {
    for (const [address, code] of [
      [LOOP_ADDRESS, KECCAK_LOOP_CODE],
      [BLAKE2F_ADDRESS, BLAKE2F_LOOP_CODE],
      [VIEW_ADDRESS, VIEW_CODE],
    ]) {
      const reply = await pool.request({
        path: '/',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: rpcBody('anvil_setCode', [address, code]),
      });
      const answer = JSON.parse(await reply.body.text()) as { error?: unknown };
      if (answer.error !== undefined) throw new Error(`anvil_setCode: ${JSON.stringify(answer.error)}`);
    }
  } finally {
    await pool.close();
  }
}

const HEAVY_IN_FLIGHT =
  'rate limited: too many eth_call, eth_estimateGas, eth_createAccessList or eth_simulateV1 requests in flight from this source; retry later';
/** A call its source's recent calls show would not fit between two of anvil's ticks (src/el-turns.ts). */
const CALL_TOO_LONG =
  'rate limited: calls this large from this source lately kept the execution layer longer than one call may; ask for less gas or retry later';

/**
 * The attacks of row N2, as request bodies, with the 429 each is refused with; then a flood of
 * cheap reads past the source's quota from most of the connections a source may open (refused by
 * its bucket or its in-flight cap, whichever it meets). Each from its own address: what one
 * leaves its source owing (EL time, refusals past its allowance) outlasts a phase.
 */
export const ATTACKS = {
  /** 32 clients, each an eth_call of the loop at the 50,000,000 cap. */
  calls: {
    from: '127.0.0.1',
    concurrency: 32,
    body: rpcBody('eth_call', [{ to: LOOP_ADDRESS, gas: hex(MAX_GAS) }, 'latest']),
    refusal: HEAVY_IN_FLIGHT,
  },
  /** 4 clients, each an eth_simulateV1 of 16 loop calls sharing the cap (what size-limit lets through). */
  simulations: {
    from: '127.0.0.3',
    concurrency: 4,
    body: rpcBody('eth_simulateV1', [
      { blockStateCalls: [{ calls: Array.from({ length: 16 }, () => ({ to: LOOP_ADDRESS, gas: hex(MAX_GAS / 16) })) }] },
      'latest',
    ]),
    refusal: HEAVY_IN_FLIGHT,
  },
  /** 4 clients, each an eth_simulateV1 of 4 BLAKE2F loop calls at the cap (the most size-limit lets through). */
  'blake2f simulations': {
    from: '127.0.0.5',
    concurrency: 4,
    body: rpcBody('eth_simulateV1', [
      { blockStateCalls: [{ calls: Array.from({ length: 4 }, () => ({ to: BLAKE2F_ADDRESS, gas: hex(MAX_GAS) })) }] },
      'latest',
    ]),
    refusal: HEAVY_IN_FLIGHT,
    /**
     * One such simulation keeps anvil ~4.5 s at the chain's 60,000,000-gas blocks, longer than a
     * block: anvil seals a block only once the call running then has ended, every read of the
     * new head waiting meanwhile, whatever lane it is on. Its source's first two run (the
     * ingress learns a source's cost from its answers); the next are refused before they are
     * sent, as longer than fits between two of anvil's ticks (src/el-turns.ts). The attack runs
     * this long before the victim is measured: the phase is what a source's steady attack does.
     */
    warmUpMs: 12_000,
    bounded: CALL_TOO_LONG,
  },
  /**
   * 32 clients, each a gasless eth_estimateGas of the loop (the EL searches: many runs up to the
   * block's 60,000,000 gas, ~0.8 s of anvil). Each victim transfer makes anvil seal at its next
   * tick, which waits for the estimate running: straight against anvil, one such estimate at a
   * time, the victim's transfers p90 was 137-894 ms over six phases. The heavy lane starts them
   * between anvil's ticks once it has seen two seals (src/seal-watch.ts).
   */
  estimates: {
    from: '127.0.0.6',
    concurrency: 32,
    body: rpcBody('eth_estimateGas', [{ to: LOOP_ADDRESS }]),
    refusal: HEAVY_IN_FLIGHT,
  },
  /** 32 clients, each an eth_call of the loop at 2,000,000 gas: as much as a call may ask for and still be sent to the quick lane unmeasured. */
  'quick-lane calls': {
    from: '127.0.0.7',
    concurrency: 32,
    body: rpcBody('eth_call', [{ to: LOOP_ADDRESS, gas: hex(2_000_000) }, 'latest']),
    refusal: HEAVY_IN_FLIGHT,
  },
  /**
   * 32 clients, each a gasless eth_call of the victim's view, its selector followed by a word that
   * runs the loop to the cap: the target the victim's own gasless calls are learned by.
   */
  'calls to a shared target': {
    from: '127.0.0.9',
    concurrency: 32,
    body: rpcBody('eth_call', [{ to: VIEW_ADDRESS, data: `${VIEW_SELECTOR}${'0'.repeat(63)}1` }, 'latest']),
    refusal: HEAVY_IN_FLIGHT,
  },
  /**
   * The same from 16 sources (127.0.4.1-16), 2 clients each (as many gas-heavy reads as a source
   * may have open): sources enough to mark the target, and to fill the quick lane with calls
   * that its measurements call tiny.
   */
  'calls to a shared target from 16 sources': {
    from: Array.from({ length: 16 }, (_, i) => `127.0.4.${i + 1}`),
    concurrency: 32,
    body: rpcBody('eth_call', [{ to: VIEW_ADDRESS, data: `${VIEW_SELECTOR}${'0'.repeat(63)}1` }, 'latest']),
    refusal: undefined,
    /** Each source within its quotas: nothing refused. */
    withinQuota: true,
  },
  /** 150 clients (of the 156 connections a source may open by default), each an eth_blockNumber. */
  reads: {
    from: '127.0.0.4',
    concurrency: 150,
    body: rpcBody('eth_blockNumber', []),
    refusal: undefined,
  },
} as const;

/** 16 loop calls at the cap each: refused whole by size-limit. */
export const OVER_CAP_SIMULATION = rpcBody('eth_simulateV1', [
  { blockStateCalls: [{ calls: Array.from({ length: 16 }, () => ({ to: LOOP_ADDRESS, gas: hex(MAX_GAS) })) }] },
  'latest',
]);

/**
 * The attacker, until `until`: `concurrency` clients sending `body` back to back. Counts how they
 * were answered: "result", "429 -32005 <message>" (with Retry-After and data.retry_after_ms), or
 * "unexpected: ..." with the answer.
 */
export async function attack(
  url: string,
  from: string | readonly string[],
  body: string,
  concurrency: number,
  until: number,
  backoffMs = 0,
  headers: Readonly<Record<string, string>> = {},
): Promise<Map<string, number>> {
  const addresses = typeof from === 'string' ? [from] : from;
  const pools = addresses.map((localAddress) => new Pool(url, { connections: Math.ceil(concurrency / addresses.length), localAddress }));
  const counts = new Map<string, number>();
  const count = (what: string) => counts.set(what, (counts.get(what) ?? 0) + 1);
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      const pool = pools[client % pools.length]!;
      while (Date.now() < until) {
        const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
        const text = await reply.body.text();
        const answer = JSON.parse(text) as {
          result?: unknown;
          error?: { code: number; message: string; data?: { retry_after_ms?: number } };
        };
        if (answer.result !== undefined && reply.statusCode === 200) count('result');
        else if (
          reply.statusCode === 429 &&
          answer.error?.code === -32005 &&
          reply.headers['retry-after'] !== undefined &&
          typeof answer.error.data?.retry_after_ms === 'number'
        ) {
          count(`429 -32005 ${answer.error.message}`);
          if (backoffMs > 0) await new Promise((resolve) => setTimeout(resolve, backoffMs));
        } else count(`unexpected: HTTP ${reply.statusCode} ${text.slice(0, 300)}`);
      }
    }),
  );
  await Promise.all(pools.map((pool) => pool.close()));
  return counts;
}

export interface VictimLatencies {
  readonly reads: number[];
  /** eth_call naming 30,000 gas. */
  readonly calls: number[];
  /** Gasless eth_call of a view (learned by its target: call-gas.ts). */
  readonly views: number[];
  /** Gasless eth_estimateGas of a transfer. */
  readonly estimates: number[];
  readonly submissions: number[];
  /** Answers other than the expected result (their latency counted too), as received. */
  readonly failures: string[];
}

/**
 * The victim's transfers, signed ahead (signing is not what is measured): `count` from dev key
 * `keyIndex`, nonces from `nonce` on, alternately legacy and EIP-1559.
 */
export async function signTransfers(keyIndex: number, nonce: number, count: number): Promise<string[]> {
  const wallet = new Wallet(DEV_KEYS[keyIndex]!);
  const raws: string[] = [];
  for (let i = 0; i < count; i++) {
    const common = { chainId: Number(CHAIN.chainId), nonce: nonce + i, to: RECIPIENT, value: 1n, gasLimit: 21_000n };
    const tx =
      i % 2 === 0
        ? Transaction.from({ ...common, type: 0, gasPrice: 100_000_000_000n })
        : Transaction.from({ ...common, type: 2, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 0n });
    raws.push(await wallet.signTransaction(tx));
  }
  return raws;
}

/** Transfers signed ahead, taken in order across the runs of `victim`. */
export interface Transfers {
  readonly raws: readonly string[];
  next: number;
}

/** The victim, until `until`: balances one at a time, and the next of `transfers` every SUBMISSION_GAP_MS. */
export async function victim(url: string, transfers: Transfers, until: number): Promise<VictimLatencies> {
  const pool = new Pool(url, { connections: 3, localAddress: VICTIM });
  const reads: number[] = [];
  const calls: number[] = [];
  const views: number[] = [];
  const estimates: number[] = [];
  const submissions: number[] = [];
  const failures: string[] = [];
  const send = async (body: string, check: (text: string) => boolean): Promise<number> => {
    const started = performance.now();
    const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await reply.body.text();
    if (reply.statusCode !== 200 || !check(text)) failures.push(`HTTP ${reply.statusCode} ${text.slice(0, 200)}`);
    return performance.now() - started;
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const balance = rpcBody('eth_getBalance', [RECIPIENT, 'latest']);
  const callWithGas = rpcBody('eth_call', [{ to: LOOP_ADDRESS, gas: hex(30_000) }, 'latest']);
  const view = rpcBody('eth_call', [{ to: VIEW_ADDRESS, data: VIEW_SELECTOR }, 'latest']);
  const estimate = rpcBody('eth_estimateGas', [{ from: RECIPIENT, to: VIEW_ADDRESS, value: '0x0' }]);
  await Promise.all([
    (async () => {
      for (let i = 0; Date.now() < until; i++) {
        const answered = (text: string) => /"result":"0x[0-9a-f]*"/.test(text);
        if (i % 3 === 0) calls.push(await send(callWithGas, answered));
        else if (i % 3 === 1) views.push(await send(view, answered));
        else estimates.push(await send(estimate, answered));
        await pause(CALL_GAP_MS);
      }
    })(),
    (async () => {
      while (Date.now() < until) {
        reads.push(await send(balance, (text) => /"result":"0x[0-9a-f]+"/.test(text)));
        await pause(READ_GAP_MS);
      }
    })(),
    (async () => {
      while (Date.now() < until) {
        const raw = transfers.raws[transfers.next++];
        if (raw === undefined) throw new Error('victim: more transfers needed');
        submissions.push(await send(rpcBody('eth_sendRawTransaction', [raw]), (text) => /"result":"0x[0-9a-f]{64}"/.test(text)));
        await pause(SUBMISSION_GAP_MS);
      }
    })(),
  ]);
  await pool.close();
  return { reads, calls, views, estimates, submissions, failures };
}

/** The value `share` of the way up (the upper one between two). */
export const quantile = (values: readonly number[], share: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * share))]!;
/** The middle value (the upper one of an even count). */
export const p50 = (values: readonly number[]): number => quantile(values, 0.5);
export const p90 = (values: readonly number[]): number => quantile(values, 0.9);
