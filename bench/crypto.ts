/**
 * What the portable crypto costs: keccak-256 and secp256k1 recovery, native (libkeccak,
 * libsecp256k1) and pure JS (@noble), in one process, each timed over the same inputs
 * (protocol/crypto-backend.ts; the ingress falls back to the pure-JS ones where the native
 * binaries do not load, or under SVC_PORTABLE_CRYPTO=1).
 *
 *   npm run bench:crypto [iterations]
 *
 * Per submission, an EIP-1559 transfer hashes its ~110 bytes twice (its hash, its signing
 * digest) and recovers one key; a 5 KB ML-DSA-65 frame transaction hashes ~5 KB twice.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { randomBytes } from 'node:crypto';
import { nativeBackend, portableBackend } from '../protocol/index.js';

const ITERATIONS = Number(process.argv[2] ?? 20_000);

function microseconds(run: () => void, iterations: number): number {
  for (let i = 0; i < Math.min(1_000, iterations); i++) run();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) run();
  return Number(process.hrtime.bigint() - start) / 1_000 / iterations;
}

const native = nativeBackend();
const portable = portableBackend();
const short = randomBytes(110);
const long = randomBytes(5_000);
const key = randomBytes(32);
const digest = randomBytes(32);
const signed = secp256k1.sign(digest, key, { prehash: false, format: 'recovered' });
const [recovery, signature] = [signed[0]!, signed.subarray(1)];

const rows: Array<[string, number, number]> = [
  ['keccak-256 of 110 bytes', microseconds(() => native.keccak(short), ITERATIONS), microseconds(() => portable.keccak(short), ITERATIONS)],
  [
    'keccak-256 of 5,000 bytes',
    microseconds(() => native.keccak(long), ITERATIONS / 4),
    microseconds(() => portable.keccak(long), ITERATIONS / 4),
  ],
  [
    'secp256k1 public-key recovery',
    microseconds(() => native.recover(signature, recovery, digest), ITERATIONS / 4),
    microseconds(() => portable.recover(signature, recovery, digest), ITERATIONS / 20),
  ],
];
const [shortHash, longHash, recover] = rows.map(([, n, p]) => [n, p] as const);
rows.push(
  ['per EIP-1559 transfer (2 hashes, 1 recovery)', 2 * shortHash![0] + recover![0], 2 * shortHash![1] + recover![1]],
  ['per 5 KB frame transaction (2 hashes)', 2 * longHash![0], 2 * longHash![1]],
);

console.log(`crypto backends, ${new Date().toISOString()}, node ${process.version}`);
console.log('operation | native µs | portable µs | portable / native');
for (const [name, n, p] of rows) console.log(`${name} | ${n.toFixed(1)} | ${p.toFixed(1)} | x${(p / n).toFixed(1)}`);
