/**
 * `npm run example:contract-account`: a smart account, owned by an ML-DSA-65 key, sends value.
 *
 * The account is a contract (deployed here by an ordinary transaction, funded by it). Its code
 * is what a VERIFY frame runs: it reads signature entry 0 with SIGPARAM and approves execution
 * and payment (APPROVE 3) only if the entry is an MLDSA65 signature of its owner over this
 * transaction's signature hash. The chain verifies that signature before any frame runs, so the
 * code only has to check whose it is. Built with svc-ingress/client, its gas the node's estimate.
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
import { connect, describe, fees, RECEIPT_WAIT } from './chain.js';

const SEED = process.env.MLDSA_SEED ?? 'svc-ingress example: smart account owner';
const RECIPIENT = (process.env.RECIPIENT ?? `0x${id(`${SEED}: recipient`).slice(-40)}`) as `0x${string}`;
const AMOUNT = 10n ** 15n; // 0.001 ETH

/** Bytecode, one instruction per line. */
const asm = (...lines: Array<[hex: string, comment: string]>) => lines.map(([hex]) => hex).join('');

/** The account's code: APPROVE(3) if entry 0 is the owner's MLDSA65 signature over the signature hash, else REVERT. */
const accountCode = (owner: string) =>
  asm(
    ['6001', 'PUSH1 1      SIGPARAM parameter 1: scheme'],
    ['5f', 'PUSH0        of entry 0'],
    ['b4', 'SIGPARAM'],
    ['6065', 'PUSH1 0x65   MLDSA65'],
    ['14', 'EQ'],
    ['6002', 'PUSH1 2      parameter 2: msg (0 for the signature hash)'],
    ['5f', 'PUSH0        of entry 0'],
    ['b4', 'SIGPARAM'],
    ['15', 'ISZERO'],
    ['16', 'AND'],
    ['5f', 'PUSH0        parameter 0: signer'],
    ['5f', 'PUSH0        of entry 0'],
    ['b4', 'SIGPARAM'],
    [`73${owner.slice(2)}`, 'PUSH20       the owner'],
    ['14', 'EQ'],
    ['16', 'AND'],
    ['602d', 'PUSH1 45     to the JUMPDEST'],
    ['57', 'JUMPI'],
    ['5f5ffd', 'PUSH0 PUSH0 REVERT'],
    ['5b', 'JUMPDEST     pc 45'],
    ['6003', 'PUSH1 3      scope: execution and payment'],
    ['5f5f', 'PUSH0 PUSH0  no return data'],
    ['aa', 'APPROVE'],
  );

/** Init code: copies the 51-byte runtime that follows it (at offset 9) and returns it. */
const deployCode = (runtime: string) =>
  `0x${asm(['6033', 'PUSH1 51  size'], ['80', 'DUP1'], ['6009', 'PUSH1 9  offset'], ['5f', 'PUSH0'], ['39', 'CODECOPY'], ['5f', 'PUSH0'], ['f3', 'RETURN'])}${runtime}`;

const { provider, dev } = connect();
const owner = mldsa65Signer(id(SEED) as `0x${string}`);
console.log(`owner: ML-DSA-65 key of ${owner.address}`);

const deployment = await dev.sendTransaction({ data: deployCode(accountCode(owner.address)), value: 10n ** 18n });
const deployed = await deployment.wait(1, 60_000);
const account = deployed!.contractAddress!.toLowerCase() as `0x${string}`;
console.log(`smart account ${account} deployed and funded with 1 ETH by ${dev.address}`);

const draft: FrameTransaction = {
  from: account,
  nonce: BigInt(await provider.getTransactionCount(account)),
  frames: [
    // The account's own code decides: it runs with the entry below visible through SIGPARAM.
    { mode: FRAME_MODE.verify, flags: FRAME_FLAGS.approveBoth },
    { mode: FRAME_MODE.sender, target: RECIPIENT, value: AMOUNT },
  ],
  // An explicit signer: the owner, not the account.
  signatures: [{ scheme: SIGNATURE_SCHEME.mldsa65, signer: owner.address }],
  ...(await fees(provider)),
};
const estimate = await estimateFrameGas(ethersRequest(provider), draft);
const tx = signFrameTransaction(withFrameGas(draft, estimate), [owner]);

const before = [await provider.getBalance(account), await provider.getBalance(RECIPIENT)];
console.log(`sending ${formatEther(AMOUNT)} ETH to ${RECIPIENT}`);
const hash = await sendFrameTransaction(provider, tx);
const receipt = await waitForFrameReceipt(provider, hash, RECEIPT_WAIT);
const after = [await provider.getBalance(account), await provider.getBalance(RECIPIENT)];
console.log(`frame transaction ${hash}\n${describe(receipt)}`);
console.log(`  account   ${formatEther(before[0]!)} -> ${formatEther(after[0]!)} ETH`);
console.log(`  recipient ${formatEther(before[1]!)} -> ${formatEther(after[1]!)} ETH`);
provider.destroy();
if (receipt.status !== 'success') process.exit(1);
