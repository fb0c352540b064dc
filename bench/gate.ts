/**
 * Gate throughput: admitted submissions per second through the running ingress (full plugin
 * chain, real anvil as EL), for ECDSA transfers and for ML-DSA-65 frame transactions, printed
 * beside the raw cost of one signature check measured in the same run.
 *
 *   npm run build && node dist/bench/gate.js [ecdsaCount] [frameCount]
 *
 * The ingress runs as its own process (`svc-ingress --config`), like in production. anvil runs
 * with mining off so the EL's block production is not what is measured; frame transactions go
 * through a stub `svc_validateTransaction` in front of anvil (no public EL implements type
 * 0x06), which shares this process with the load generator. Rate limits are not in the chain.
 */
import { getBytes, keccak256, Transaction, Wallet } from 'ethers';
import { Pool } from 'undici';
import { decodeFrameTransaction } from '../plugins/gate/frame-codec.js';
import { recoverAddress, verifyFrameSignatures } from '../plugins/gate/signatures.js';
import { startAnvil } from '../devnet/anvil.js';
import { startIngressProcess } from '../test/helpers/child.js';
import { mldsaEntry, mldsaKeys, transferFrameTx } from '../test/helpers/frames.js';
import { startValidatingEl } from '../test/helpers/validating-el.js';

const ECDSA_COUNT = Number(process.argv[2] ?? 3000);
const FRAME_COUNT = Number(process.argv[3] ?? 400);
const CONCURRENCY = 32;
const PER_SENDER = 16;
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const FUNDS = '0x3635c9adc5dea00000'; // 1000 ether

const chain = (url: string) => `listen: 127.0.0.1:0
upstreams:
  execution: ${url}
log_level: info
plugins:
  - batch-refuse
  - size-limit
  - allowlist
  - gate:
      in_flight_cap: ${PER_SENDER}
      cache_max_entries: 1000000
  - fee-rewrite
`;

function rate(count: number, ms: number): string {
  return `${Math.round((count * 1000) / ms).toLocaleString('en-US')}/s`;
}

function timed(label: string, count: number, fn: (i: number) => void): number {
  const start = performance.now();
  for (let i = 0; i < count; i++) fn(i);
  const ms = performance.now() - start;
  console.log(`  ${label.padEnd(48)} ${rate(count, ms).padStart(10)}`);
  return (count * 1000) / ms;
}

/**
 * Sends every raw transaction once over CONCURRENCY keep-alive clients. Bodies and the expected
 * answers are prepared first, so the load generator's own hashing is not in the measurement.
 */
async function submitAll(url: string, raws: readonly string[]): Promise<{ admitted: number; ms: number; refusals: Map<string, number> }> {
  const requests = raws.map((raw) => ({
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
    admitted: JSON.stringify({ jsonrpc: '2.0', id: 1, result: keccak256(raw) }),
  }));
  const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
  let next = 0;
  let admitted = 0;
  const refusals = new Map<string, number>();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const { body, admitted: expected } = requests[next++]!;
        const reply = await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const text = await reply.body.text();
        if (text === expected) {
          admitted++;
          continue;
        }
        const why = (JSON.parse(text) as { error?: { message: string } }).error?.message ?? 'wrong hash';
        refusals.set(why, (refusals.get(why) ?? 0) + 1);
      }
    }),
  );
  const ms = performance.now() - start;
  await pool.close();
  return { admitted, ms, refusals };
}

async function main(): Promise<void> {
  console.log(`gate benchmark: ${ECDSA_COUNT} ECDSA transfers, ${FRAME_COUNT} ML-DSA-65 frame transactions, ${CONCURRENCY} clients`);
  const anvil = await startAnvil({ extraArgs: ['--no-mining'] });
  const el = await startValidatingEl(anvil.url, () => ({ result: { valid: true } }));
  const rpc = (method: string, params: unknown[]) =>
    fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  try {
    // ECDSA: distinct funded senders, PER_SENDER transfers each (nonces 0..15); a second,
    // identical set goes straight to anvil as the EL's own ceiling in this run.
    const transfers = async () => {
      const senders = Array.from({ length: Math.ceil(ECDSA_COUNT / PER_SENDER) }, () => Wallet.createRandom());
      for (const w of senders) await rpc('anvil_setBalance', [w.address, FUNDS]);
      return Promise.all(
        Array.from({ length: ECDSA_COUNT }, (_, i) =>
          senders[i % senders.length]!.signTransaction({
            chainId: 8141, nonce: Math.floor(i / senders.length), to: RECIPIENT, value: 1n, gasLimit: 21_000,
            maxFeePerGas: 5_000_000_000n, maxPriorityFeePerGas: 0n, type: 2,
          }),
        ),
      );
    };
    const ecdsa = await transfers();
    const direct = await transfers();
    // ML-DSA-65 frame transfers: one per sender (nonce must equal the state nonce).
    const frames: string[] = [];
    for (let i = 0; i < FRAME_COUNT; i++) {
      const seed = getBytes(keccak256(new Uint8Array([i >> 8, i & 255])));
      const keys = mldsaKeys(seed);
      await rpc('anvil_setBalance', [keys.address, FUNDS]);
      frames.push(transferFrameTx({ sender: keys.address, to: RECIPIENT, value: 1n, scheme: 0x65, sign: (d) => mldsaEntry(keys, d) }).raw);
    }

    console.log('\nraw signature checks (one core, this run):');
    const parsed = ecdsa.map((raw) => Transaction.from(raw));
    timed('secp256k1 recovery, ethers Transaction.from().from', Math.min(500, ECDSA_COUNT), (i) => void Transaction.from(ecdsa[i]!).from);
    const native = timed('secp256k1 recovery, native libsecp256k1', ECDSA_COUNT, (i) => {
      const tx = parsed[i]!;
      const sig = tx.signature!;
      recoverAddress(getBytes(tx.unsignedHash), getBytes(sig.r), getBytes(sig.s), sig.yParity);
    });
    const decodedFrames = frames.map((raw) => decodeFrameTransaction(raw));
    const mldsa = timed('ML-DSA-65 verify (+ key address), @noble/post-quantum', FRAME_COUNT, (i) => verifyFrameSignatures(decodedFrames[i]!));

    console.log('\nthe EL alone (anvil, same transfers, same clients):');
    const d = await submitAll(anvil.url, direct);
    console.log(`  ${'ECDSA transfers accepted by anvil directly'.padEnd(48)} ${rate(d.admitted, d.ms).padStart(10)}`);

    console.log('\nthrough the svc-ingress process (full chain, HTTP, keep-alive):');
    const ecdsaIngress = await startIngressProcess(chain(anvil.url), undefined, process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []);
    const e = await submitAll(ecdsaIngress.url, ecdsa);
    ecdsaIngress.child.kill('SIGTERM');
    await ecdsaIngress.exited;
    console.log(`  ${'ECDSA transfers admitted'.padEnd(48)} ${rate(e.admitted, e.ms).padStart(10)}  (${e.admitted}/${ECDSA_COUNT}; ${(e.admitted / (e.ms / 1000) / native * 100).toFixed(0)}% of bare native recovery, ${((e.admitted / e.ms) / (d.admitted / d.ms) * 100).toFixed(0)}% of anvil direct)`);
    const frameIngress = await startIngressProcess(chain(el.url), undefined, process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof-frames'] : []);
    const f = await submitAll(frameIngress.url, frames);
    frameIngress.child.kill('SIGTERM');
    await frameIngress.exited;
    console.log(`  ${'ML-DSA-65 frame transactions admitted'.padEnd(48)} ${rate(f.admitted, f.ms).padStart(10)}  (${f.admitted}/${FRAME_COUNT}; ${(f.admitted / (f.ms / 1000) / mldsa * 100).toFixed(0)}% of bare ML-DSA verify)`);
    for (const [why, n] of [...e.refusals, ...f.refusals]) console.log(`  refused ${n}: ${why}`);
  } finally {
    await el.close();
    await anvil.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
