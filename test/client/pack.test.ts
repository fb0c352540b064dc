/**
 * svc-ingress/client as a wallet gets it: `npm pack`, installed into an empty project (no dev
 * tools: the postinstall must not need patch-package), imported by its package name. Its
 * encoding is the chain's byte for byte, it round-trips, and its ML-DSA-65 signer's transfer,
 * estimated and sent through its ethers helpers, executes on the devnet.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mldsa65Signer } from '../../client/index.js';
import { encodeFrameTx } from '../../support/frames.js';
import { call } from '../../support/http.js';
import { scratchDir } from '../../support/scratch.js';
import { fund, useDevnet } from '../helpers/devnet.js';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** frame-transactions.md section 10, V3: a SECP256K1-signed two-frame transaction. */
const V3 =
  '0x06f89b821fcd80947e5f4552091a69125d5dfcb7b8c2659029395bdfeaca010380c482c350808080de0280940000000000000000000000000000000000001234c482c350800180f848f846018080b841017a3519e066ec20068a5d05b0e66a1e17b29b98ae20535c8241dc09aa3a60f44a06cc4a99b41141d0be281cc1a0573c2c4dad116c7e67d98c3fa38c141c48fea8cb843b9aca00847735940080c0';
const SEED = `0x${'5a'.repeat(32)}` as const;
const RECIPIENT = '0x00000000000000000000000000000000000c1e77';

/** What the installed package's user runs: plain ESM against the package name. */
const USE = `
import { JsonRpcProvider } from 'ethers';
import { decodeFrameTransaction, encodeFrameTransaction, estimateFrameGas, mldsa65Signer, signFrameTransaction, withFrameGas } from 'svc-ingress/client';
import { ethersRequest, sendFrameTransaction, waitForFrameReceipt } from 'svc-ingress/client/ethers';
const [url, v3, seed, recipient] = process.argv.slice(2);
const fields = { from: '0x00000000000000000000000000000000000000aa', nonce: 3n, maxFeePerGas: 7n, frames: [{ mode: 1, flags: 3, executionGas: 100n }, { mode: 2, target: recipient, executionGas: 2600n, stateGas: 5n, value: 9n, data: '0x2a' }], signatures: [{ scheme: 0x65 }] };
const roundTrip = encodeFrameTransaction(decodeFrameTransaction(v3));
const provider = new JsonRpcProvider(url, 8141, { staticNetwork: true, batchMaxCount: 1 });
const signer = mldsa65Signer(seed);
const draft = { from: signer.address, maxFeePerGas: 3000000000n, frames: [{ mode: 1, flags: 3 }, { mode: 2, target: recipient, value: 5n }], signatures: [{ scheme: 0x65 }] };
const estimate = await estimateFrameGas(ethersRequest(provider), draft);
const tx = signFrameTransaction(withFrameGas({ ...draft, nonce: 0n }, estimate), [signer]);
const receipt = await waitForFrameReceipt(provider, await sendFrameTransaction(provider, tx), { timeoutMs: 30000 });
provider.destroy();
console.log(JSON.stringify({ roundTrip, encoded: encodeFrameTransaction(fields), address: signer.address, status: receipt.status, frames: receipt.frameReceipts.map((f) => f.status), payer: receipt.payer }));
`;

describe('client: svc-ingress/client installed from npm pack into an empty project', function () {
  this.timeout(240_000);
  const devnet = useDevnet();
  let project: string;

  before(async () => {
    const packed = scratchDir('svc-pack');
    await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packed], { cwd: ROOT, timeout: 120_000 });
    const tarball = join(packed, readdirSync(packed).find((f) => f.endsWith('.tgz'))!);
    project = scratchDir('svc-client');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty-wallet', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: project, timeout: 180_000 });
    writeFileSync(join(project, 'use.mjs'), USE);
  });

  it("encodes as the chain does, round-trips, and its ML-DSA-65 signer's estimated transfer executes", async () => {
    const signer = mldsa65Signer(SEED);
    await fund(devnet.current, signer.address);
    const { stdout } = await run(process.execPath, ['use.mjs', devnet.current.ingress.url, V3, SEED, RECIPIENT], {
      cwd: project,
      timeout: 60_000,
    });
    const out = JSON.parse(stdout) as {
      roundTrip: string;
      encoded: string;
      address: string;
      status: string;
      frames: string[];
      payer: string;
    };
    expect(out.roundTrip).to.equal(V3);
    // The same fields through the repository's own ethers-RLP encoder (support/frames.ts).
    expect(out.encoded).to.equal(
      encodeFrameTx({
        sender: '0x00000000000000000000000000000000000000aa',
        nonce: 3n,
        fees: [0n, 7n, 0n],
        frames: [
          { mode: 1, flags: 3, executionGas: 100n },
          { mode: 2, flags: 0, target: RECIPIENT, executionGas: 2600n, stateGas: 5n, value: 9n, data: '0x2a' },
        ],
        signatures: [{ scheme: 0x65 }],
      }),
    );
    expect(out).to.deep.include({ address: signer.address, status: 'success', frames: ['success', 'success'], payer: signer.address });
    expect(await call(devnet.current.ingress.url, 'eth_getBalance', [RECIPIENT, 'latest'])).to.equal('0x5');
  });
});
