/**
 * `npm run example:mldsa`: an ML-DSA-65 account sends value on chain 8141.
 *
 * The account has no code: like an EOA, it is the address of its key (keccak256 of the public
 * key, last 20 bytes), and the chain's default code checks its MLDSA65 signature. A transfer is
 * two frames: VERIFY (the sender approves execution and payment: flags 3) and SENDER (the call
 * made as the sender, carrying the value). Against `npm start` by default (RPC_URL for another).
 */
import { formatEther, getBytes, id } from 'ethers';
import { connect, describe, exists, fees, fund, sendFrameTx } from './chain.js';
import {
  encodeFrameTx,
  FLAGS,
  frameSigHash,
  MODE,
  mldsaEntry,
  mldsaKeys,
  NEW_ACCOUNT_STATE_GAS,
  SCHEME,
  type FrameTxFields,
} from './frame-transaction.js';

const SEED = process.env.MLDSA_SEED ?? 'svc-ingress example: ML-DSA-65 account';
const RECIPIENT = process.env.RECIPIENT ?? `0x${id(`${SEED}: recipient`).slice(-40)}`;
const AMOUNT = 10n ** 15n; // 0.001 ETH

const { provider, dev } = connect();
const keys = mldsaKeys(getBytes(id(SEED)));
console.log(`ML-DSA-65 account ${keys.address} (public key ${keys.publicKey.length} bytes)`);

if ((await provider.getBalance(keys.address)) < 10n ** 17n) {
  console.log(`funding it with 1 ETH from ${dev.address} and waiting for the receipt`);
  await fund(dev, keys.address, 10n ** 18n);
}

const tx: FrameTxFields = {
  nonce: BigInt(await provider.getTransactionCount(keys.address)),
  sender: keys.address,
  frames: [
    // Default code: approves with scope 3 if signature 0 is the sender's over the signature hash.
    { mode: MODE.verify, flags: FLAGS.approveBoth, executionGas: 10_000n },
    // Value to an account that does not exist yet creates it: that is paid in state gas.
    {
      mode: MODE.sender,
      flags: 0,
      target: RECIPIENT,
      executionGas: 30_000n,
      value: AMOUNT,
      stateGas: (await exists(provider, RECIPIENT)) ? 0n : NEW_ACCOUNT_STATE_GAS,
    },
  ],
  signatures: [{ scheme: SCHEME.mldsa65 }],
  fees: await fees(provider),
};
tx.signatures[0]!.signature = mldsaEntry(keys, frameSigHash(tx));

const before = [await provider.getBalance(keys.address), await provider.getBalance(RECIPIENT)];
console.log(`sending ${formatEther(AMOUNT)} ETH to ${RECIPIENT}`);
const { hash, receipt } = await sendFrameTx(provider, encodeFrameTx(tx));
const after = [await provider.getBalance(keys.address), await provider.getBalance(RECIPIENT)];
console.log(`frame transaction ${hash}\n${describe(receipt)}`);
console.log(`  sender    ${formatEther(before[0]!)} -> ${formatEther(after[0]!)} ETH`);
console.log(`  recipient ${formatEther(before[1]!)} -> ${formatEther(after[1]!)} ETH`);
provider.destroy();
if (receipt.status !== '0x1') process.exit(1);
