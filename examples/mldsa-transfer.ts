/**
 * `npm run example:mldsa`: an ML-DSA-65 account sends value on chain 8141, with
 * svc-ingress/client (here imported from the repository; a wallet imports 'svc-ingress/client').
 *
 * The account has no code: like an EOA, it is the address of its key (keccak256 of the public
 * key, last 20 bytes), and the chain's default code checks its MLDSA65 signature. A transfer is
 * two frames: VERIFY (the sender approves execution and payment: flags 3) and SENDER (the call
 * made as the sender, carrying the value). Their gas is the node's estimate (svc_estimateFrameGas).
 * Against `npm start` by default (RPC_URL for another).
 */
import { formatEther, id } from 'ethers';
import {
  estimateFrameGas,
  FRAME_FLAGS,
  FRAME_MODE,
  type FrameTransaction,
  mldsa65Signer,
  SIGNATURE_SCHEME,
  signFrameTransaction,
  withFrameGas,
} from '../client/index.js';
import { ethersRequest, sendFrameTransaction, waitForFrameReceipt } from '../client/ethers.js';
import { connect, describe, fees, fund, RECEIPT_WAIT } from './chain.js';

const SEED = process.env.MLDSA_SEED ?? 'svc-ingress example: ML-DSA-65 account';
const RECIPIENT = (process.env.RECIPIENT ?? `0x${id(`${SEED}: recipient`).slice(-40)}`) as `0x${string}`;
const AMOUNT = 10n ** 15n; // 0.001 ETH

const { provider, dev } = connect();
const signer = mldsa65Signer(id(SEED) as `0x${string}`);
console.log(`ML-DSA-65 account ${signer.address} (public key ${signer.publicKey.length} bytes)`);

if ((await provider.getBalance(signer.address)) < 10n ** 17n) {
  console.log(`funding it with 1 ETH from ${dev.address} and waiting for the receipt`);
  await fund(dev, signer.address, 10n ** 18n);
}

const draft: FrameTransaction = {
  from: signer.address,
  nonce: BigInt(await provider.getTransactionCount(signer.address)),
  frames: [
    // Default code: approves with scope 3 if signature 0 is the sender's over the signature hash.
    { mode: FRAME_MODE.verify, flags: FRAME_FLAGS.approveBoth },
    // Value to an account that does not exist yet creates it: the estimate counts its state gas.
    { mode: FRAME_MODE.sender, target: RECIPIENT, value: AMOUNT },
  ],
  signatures: [{ scheme: SIGNATURE_SCHEME.mldsa65 }],
  ...(await fees(provider)),
};
const estimate = await estimateFrameGas(ethersRequest(provider), draft);
console.log(
  `estimated: ${estimate.frames.map((f, i) => `frame ${i} ${f.executionGas} + ${f.stateGas} state`).join(', ')}; ${estimate.gas} in all`,
);
const tx = signFrameTransaction(withFrameGas(draft, estimate), [signer]);

const before = [await provider.getBalance(signer.address), await provider.getBalance(RECIPIENT)];
console.log(`sending ${formatEther(AMOUNT)} ETH to ${RECIPIENT}`);
const hash = await sendFrameTransaction(provider, tx);
const receipt = await waitForFrameReceipt(provider, hash, RECEIPT_WAIT);
const after = [await provider.getBalance(signer.address), await provider.getBalance(RECIPIENT)];
console.log(`frame transaction ${hash}\n${describe(receipt)}`);
console.log(`  sender    ${formatEther(before[0]!)} -> ${formatEther(after[0]!)} ETH`);
console.log(`  recipient ${formatEther(before[1]!)} -> ${formatEther(after[1]!)} ETH`);
provider.destroy();
if (receipt.status !== 'success') process.exit(1);
