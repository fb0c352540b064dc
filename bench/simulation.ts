/**
 * Simulation cost: the worst validation prefixes found, each a 100,000-gas VERIFY frame run in
 * the gate's own worker code path (pool-worker.ts `simulate` in a piscina thread, reading head
 * state from a real anvil through the thread's HeadState), as milliseconds per simulation: wall
 * time and the compute time the budget meters (wall minus the EL reads it waited for), median
 * and p90, on a warm head (every read already made at this head) and on a cold one (a block
 * mined before each run: every account, code and slot read again from anvil), each case after
 * three unrecorded runs (the thread's JIT warm for it, as in a thread that has judged for a
 * while; otherwise the first runs of each case measure the compiler). Beside them, in
 * the same run, the reference: one P256 signature check (what 10 tokens were priced on, ~2.5 ms
 * each, 14 per prefix).
 *
 *   npm run bench:simulation [-- warmRuns coldRuns budgetMs caseFilter]
 *
 * BENCH_PROF=1 writes CPU profiles of the pool thread (node --cpu-prof) to /tmp/prof-simulation.
 *
 * Account code is put in place with anvil_setCode; each case is hand-assembled below (hex, one
 * instruction per helper). The 24 KB contracts start with a JUMP (so that every call frame
 * needs its jump destinations) and are otherwise JUMPDESTs.
 */
import { performance } from 'node:perf_hooks';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { bn254 } from '@noble/curves/bn254.js';
import { p256 } from '@noble/curves/nist.js';
import { SigningKey, sha256 } from 'ethers';
import { Piscina } from 'piscina';
import { startAnvil } from '../devnet/anvil.js';
import { CHAIN, checkFrameTransaction, decodeFrameTransaction } from '../protocol/index.js';
import type { PoolSettings, SimulateAnswer } from '../plugins/gate/pool/pool-worker.js';
import { HeadState } from '../plugins/gate/head/state.js';
import { Upstream } from '../src/plugin.js';
import { encodeFrameTx, RECIPIENT } from '../support/frames.js';
import { pointEvaluationInput } from '../support/kzg.js';
import {
  bigContract,
  extcodehashLoop,
  loopOf as loop,
  precompileLoop as precompileLoopCode,
  push2,
  staticCallOf as staticCallFlag,
} from '../support/verify-code.js';
import { call } from '../support/http.js';
import { median } from './measure.js';
import { runBench, type StopLater } from './production.js';

const WARM_RUNS = Number(process.argv[2] ?? 15);
const COLD_RUNS = Number(process.argv[3] ?? 5);
const BUDGET_MS = Number(process.argv[4] ?? 10_000);
const FILTER = process.argv[5] ?? '';
const PREFIX_GAS = 100_000n;
const WARM_UP_RUNS = 3;

const hex = (value: bigint | number, bytes: number) =>
  BigInt(value)
    .toString(16)
    .padStart(bytes * 2, '0');
const push = (value: bigint | number, bytes: number) => `${(0x5f + bytes).toString(16)}${hex(value, bytes)}`;
const PUSH0 = '5f';
const POP = '50';
const GAS = '5a';
const CODE_MAX = 24_576;
/** The same 24 KB as bigContract, calling itself with all its gas: as deep as the 63/64 rule allows. */
const RECURSIVE = `0x600356${'5b'}${PUSH0.repeat(4)}30${GAS}fa${POP}00${'5b'.repeat(CODE_MAX - 13)}`;

const CONTRACT = '0x00000000000000000000000000000000000c0de0';
const MANY_BASE = 0xc0de1000n;
const MANY = 48;
const manyAddress = (i: number) => `0x${(MANY_BASE + BigInt(i)).toString(16).padStart(40, '0')}`;
const word = (value: bigint) => hex(value, 32);
const fp = (value: bigint) => hex(value, 64);
const staticCall = (to: string, argsOffset: number, argsSize: number, retOffset: number, retSize: number) =>
  `${staticCallFlag(to, argsOffset, argsSize, retOffset, retSize)}${POP}`;
const precompileLoop = (address: number, input: string, retSize = 64) => precompileLoopCode(address, input, retSize).slice(2);

function precompileInputs() {
  const digest = sha256('0x01');
  const secp = new SigningKey(`0x${'11'.repeat(32)}`).sign(digest);
  const ecrecover = `${digest.slice(2)}${word(BigInt(secp.v))}${secp.r.slice(2)}${secp.s.slice(2)}`;
  const p256Secret = p256.utils.randomSecretKey();
  const p256Sig = p256.sign(Buffer.from(digest.slice(2), 'hex'), p256Secret, { prehash: false, format: 'compact' });
  const p256Pub = Buffer.from(p256.getPublicKey(p256Secret, false)).toString('hex').slice(2);
  const p256verify = `${digest.slice(2)}${Buffer.from(p256Sig).toString('hex')}${p256Pub}`;
  const bnG1 = `${word(1n)}${word(2n)}`;
  const g2 = bn254.G2.Point.BASE.toAffine();
  const bnG2 = `${word(g2.x.c1)}${word(g2.x.c0)}${word(g2.y.c1)}${word(g2.y.c0)}`;
  const blsG1 = bls12_381.G1.Point.BASE.toAffine();
  const blsG2 = bls12_381.G2.Point.BASE.toAffine();
  const bls1 = `${fp(blsG1.x)}${fp(blsG1.y)}`;
  const bls2 = `${fp(blsG2.x.c0)}${fp(blsG2.x.c1)}${fp(blsG2.y.c0)}${fp(blsG2.y.c1)}`;
  const ones = (bytes: number) => 'ff'.repeat(bytes);
  return {
    ecrecover,
    p256verify,
    bnG1,
    bnMul: `${bnG1}${ones(32)}`,
    bnPair: `${bnG1}${bnG2}`,
    bls1,
    bls2,
    modexp32: `${word(32n)}${word(32n)}${word(32n)}${ones(32)}${ones(32)}${ones(31)}fd`,
    modexp1024: `${word(1024n)}${word(1n)}${word(1024n)}${ones(1024)}03${ones(1023)}fd`,
  };
}

interface Case {
  readonly name: string;
  /** The sender's code (the VERIFY frame runs it). */
  readonly code: string;
  /** Other accounts' code. */
  readonly contracts?: ReadonlyArray<readonly [string, string]>;
}

function cases(pointEvaluation: string): Case[] {
  const at = push(BigInt(CONTRACT), 20);
  const big = [[CONTRACT, bigContract(0)]] as const;
  const many = Array.from({ length: MANY }, (_, i) => [manyAddress(i), bigContract(i + 1)] as const);
  const input = precompileInputs();
  // counter on the stack: address (or slot) i, then i + 1
  const counted = (body: string, start: bigint, bytes: number) => loop(`${body}${push(1, 1)}01`, push(start, bytes));
  const list: Case[] = [
    { name: 'APPROVE only (the floor)', code: `0x${push(3, 1)}${PUSH0}${PUSH0}aa` },
    { name: 'JUMP loop (pure compute: the budget checks)', code: `0x${loop('')}` },
    { name: 'JUMPI loop (pure compute: the budget checks)', code: `0x${loop(`${push(1, 1)}${push2(0)}57`)}` },
    { name: 'EXTCODEHASH of one 24 KB contract', code: extcodehashLoop(CONTRACT), contracts: big },
    { name: 'EXTCODESIZE of one 24 KB contract', code: `0x${loop(`${at}3b${POP}`)}`, contracts: big },
    { name: 'EXTCODECOPY 32 B of one 24 KB contract', code: `0x${loop(`${push2(32)}${PUSH0}${PUSH0}${at}3c`)}`, contracts: big },
    { name: 'EXTCODECOPY 24 KB of one 24 KB contract', code: `0x${loop(`${push2(CODE_MAX)}${PUSH0}${PUSH0}${at}3c`)}`, contracts: big },
    { name: 'STATICCALL one 24 KB contract', code: `0x${loop(staticCall(at, 0, 0, 0, 0))}`, contracts: big },
    {
      name: 'CALL (no value) one 24 KB contract',
      code: `0x${loop(`${push2(0)}${push2(0)}${push2(0)}${push2(0)}${PUSH0}${at}${GAS}f1${POP}`)}`,
      contracts: big,
    },
    {
      name: 'DELEGATECALL one 24 KB contract',
      code: `0x${loop(`${push2(0)}${push2(0)}${push2(0)}${push2(0)}${at}${GAS}f4${POP}`)}`,
      contracts: big,
    },
    { name: `EXTCODEHASH of ${MANY} distinct 24 KB contracts`, code: `0x${counted(`803f${POP}`, MANY_BASE, 20)}`, contracts: many },
    {
      name: `EXTCODECOPY 24 KB of ${MANY} distinct contracts`,
      code: `0x${counted(`${push2(CODE_MAX)}${PUSH0}${PUSH0}833c`, MANY_BASE, 20)}`,
      contracts: many,
    },
    {
      name: `STATICCALL ${MANY} distinct 24 KB contracts`,
      code: `0x${counted(`${push2(0)}${push2(0)}${push2(0)}${push2(0)}84${GAS}fa${POP}`, MANY_BASE, 20)}`,
      contracts: many,
    },
    { name: 'self-STATICCALL, 24 KB code, as deep as gas allows', code: RECURSIVE },
    { name: 'SLOAD of distinct sender slots', code: `0x${counted(`8054${POP}`, 0n, 1)}` },
    { name: 'SLOAD of one sender slot', code: `0x${loop(`${PUSH0}54${POP}`)}` },
    { name: 'KECCAK256 of 32 KB memory', code: `0x${loop(`${push2(0x8000)}${PUSH0}20${POP}`)}` },
    { name: 'MCOPY 32 KB', code: `0x${loop(`${push2(0x8000)}${PUSH0}${push2(0x8000)}5e`)}` },
    { name: 'SHA256 (0x02) of 32 KB', code: `0x${loop(staticCall(push2(2), 0, 0x8000, 0x8000, 32))}` },
    { name: 'RIPEMD160 (0x03) of 1 KB', code: `0x${loop(staticCall(push2(3), 0, 1024, 1024, 32))}` },
    { name: 'IDENTITY (0x04) of 32 KB', code: `0x${loop(staticCall(push2(4), 0, 0x8000, 0, 0x8000))}` },
    { name: 'ECRECOVER (0x01)', code: `0x${precompileLoop(1, input.ecrecover, 32)}` },
    { name: 'MODEXP (0x05) 32-byte, 256-bit exponent', code: `0x${precompileLoop(5, input.modexp32, 32)}` },
    { name: 'MODEXP (0x05) 1024-byte, exponent 3', code: `0x${precompileLoop(5, input.modexp1024, 1024)}` },
    { name: 'BN254 ADD (0x06)', code: `0x${precompileLoop(6, `${input.bnG1}${input.bnG1}`)}` },
    { name: 'BN254 MUL (0x07)', code: `0x${precompileLoop(7, input.bnMul)}` },
    { name: 'BN254 pairing (0x08), 1 pair', code: `0x${precompileLoop(8, input.bnPair, 32)}` },
    { name: 'BLAKE2F (0x09), 2^16 rounds', code: `0x${precompileLoop(9, `00010000${'00'.repeat(208)}01`)}` },
    { name: 'BLS12 G1ADD (0x0b)', code: `0x${precompileLoop(0x0b, `${input.bls1}${input.bls1}`, 128)}` },
    { name: 'BLS12 G1MSM (0x0c), 1 pair', code: `0x${precompileLoop(0x0c, `${input.bls1}${word((1n << 255n) - 19n)}`, 128)}` },
    { name: 'BLS12 G2ADD (0x0d)', code: `0x${precompileLoop(0x0d, `${input.bls2}${input.bls2}`, 256)}` },
    { name: 'BLS12 G2MSM (0x0e), 1 pair', code: `0x${precompileLoop(0x0e, `${input.bls2}${word((1n << 255n) - 19n)}`, 256)}` },
    { name: 'BLS12 pairing (0x0f), 1 pair', code: `0x${precompileLoop(0x0f, `${input.bls1}${input.bls2}`, 32)}` },
    { name: 'BLS12 MAP_FP_TO_G1 (0x10)', code: `0x${precompileLoop(0x10, fp(12345n), 128)}` },
    { name: 'BLS12 MAP_FP2_TO_G2 (0x11)', code: `0x${precompileLoop(0x11, `${fp(12345n)}${fp(67890n)}`, 256)}` },
    { name: 'P256VERIFY (0x100)', code: `0x${precompileLoop(0x100, input.p256verify, 32)}` },
  ];
  list.push({ name: 'KZG point evaluation (0x0a)', code: `0x${precompileLoop(0x0a, pointEvaluation, 64)}` });
  return list;
}

const p90 = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.9))]!;
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

async function main(stopLater: StopLater): Promise<void> {
  const anvil = await startAnvil();
  stopLater(() => anvil.stop());
  const el = (method: string, params: unknown[]) => call(anvil.url, method, params);
  const execution = { url: anvil.url, connections: 8, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000 };
  const settings: PoolSettings = { execution, simulationBudgetMs: BUDGET_MS };
  const pool = new Piscina({
    filename: new URL('../plugins/gate/pool/pool-worker.js', import.meta.url).href,
    minThreads: 1,
    maxThreads: 1,
    concurrentTasksPerWorker: 1,
    workerData: settings,
    ...(process.env.BENCH_PROF === '1' ? { execArgv: ['--cpu-prof', '--cpu-prof-dir=/tmp/prof-simulation'] } : {}),
  });
  stopLater(() => pool.destroy());
  const heads = new HeadState(new Upstream(execution), 0);

  const point = pointEvaluationInput().slice(2);
  console.log(
    `simulation cost: ${WARM_RUNS} warm and ${COLD_RUNS} cold runs per case, budget ${BUDGET_MS} ms, ${new Date().toISOString()}, node ${process.version}`,
  );
  // The reference: one P256 entry, as signatures.ts checks it.
  const secret = p256.utils.randomSecretKey();
  const message = new Uint8Array(32).fill(7);
  const signature = p256.sign(message, secret, { prehash: false });
  const publicKey = p256.getPublicKey(secret);
  const p256Times: number[] = [];
  for (let i = 0; i < 50; i++) {
    const start = performance.now();
    p256.verify(signature, message, publicKey, { prehash: false });
    p256Times.push(performance.now() - start);
  }
  const reference = median(p256Times);
  console.log(`reference: one P256 verification ${ms(reference)} ms (median of 50, in the bench process)`);
  console.log(
    'case | outcome | warm wall ms median / p90 | warm compute ms median / p90 | cold wall ms median / p90 | cold compute median / p90 | warm compute / P256',
  );

  let next = 0xa000;
  for (const c of cases(point).filter((c) => c.name.includes(FILTER))) {
    const sender = `0x${(next++).toString(16).padStart(40, '0')}`;
    await el('anvil_setCode', [sender, c.code]);
    await el('anvil_setBalance', [sender, '0x3635c9adc5dea00000']);
    for (const [address, code] of c.contracts ?? []) await el('anvil_setCode', [address, code]);
    await el('evm_mine', []);
    const raw = encodeFrameTx({
      sender,
      frames: [
        { mode: 1, flags: 3, executionGas: PREFIX_GAS },
        { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 1n },
      ],
      signatures: [],
      fees: [0n, 2_000_000_000n, 0n],
    });
    const tx = decodeFrameTransaction(raw);
    const facts = checkFrameTransaction(tx, { chainId: CHAIN.chainId, prefixGasBudget: PREFIX_GAS, prefixStateGasBudget: 500_000n });
    const once = async () => {
      const head = await heads.fresh();
      const start = performance.now();
      const answer = (await pool.run({ tx, facts, head }, { name: 'simulate' })) as SimulateAnswer;
      const wall = performance.now() - start;
      const outcome =
        answer.refusal !== undefined ? String(answer.refusal.extra?.cause ?? answer.refusal.reason) : (answer.unavailable ?? 'admitted');
      return { wall, compute: answer.computeMs, outcome };
    };
    type Run = Awaited<ReturnType<typeof once>>;
    // Unrecorded: the thread's JIT meets this case's code paths first, as a busy thread has long before.
    for (let i = 0; i < WARM_UP_RUNS; i++) await once();
    const cold: Run[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      await el('evm_mine', []);
      cold.push(await once());
    }
    const warm: Run[] = [];
    for (let i = 0; i < WARM_RUNS; i++) warm.push(await once());
    const stat = (runs: Run[], key: 'wall' | 'compute') => {
      const values = runs.map((run) => run[key]);
      return values.length === 0 ? '-' : `${ms(median(values))} / ${ms(p90(values))}`;
    };
    const ratio = warm.length === 0 ? '-' : (median(warm.map((run) => run.compute)) / reference).toFixed(1);
    console.log(
      `${c.name} | ${warm[0]?.outcome ?? cold[0]?.outcome} | ${stat(warm, 'wall')} | ${stat(warm, 'compute')} | ${stat(cold, 'wall')} | ${stat(cold, 'compute')} | ${ratio}`,
    );
  }
}

runBench(main);
