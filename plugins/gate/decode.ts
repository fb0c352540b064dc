/**
 * Decoding (frame-transactions.md section 2): dispatch on the first byte, decode once, recover
 * or verify signatures once, and hand admission a `Submission` with everything it needs.
 *
 * Standard types (legacy with EIP-155, 0x01, 0x02, 0x04) are parsed by ethers; their sender is
 * recovered with native libsecp256k1, never with ethers' `.from` (~500/s per core). Type 0x06
 * goes through the frame decoder and static checks.
 */
import { getBytes, Transaction } from 'ethers';
import { checkFrameTransaction, type FrameFacts, type FrameLimits } from './frame-checks.js';
import { decodeFrameTransaction, FRAME_TX_TYPE, type FrameTransaction } from './frame-codec.js';
import { refuse } from './refusal.js';
import { recoverAddress, verifyFrameSignatures } from './signatures.js';

export interface Submission {
  readonly raw: string;
  readonly hash: string;
  readonly type: number;
  readonly nonce: bigint;
  /** Lower-case 0x address. */
  readonly sender: string;
  /** Whose balance pays: the sender, or a frame transaction's sponsor. */
  readonly payer: string;
  readonly maxFeePerGas: bigint;
  /** Most the payer can be charged: gas × fee cap, plus value. */
  readonly maxCost: bigint;
  readonly frame?: { readonly tx: FrameTransaction; readonly facts: FrameFacts };
}

export interface DecodeLimits extends FrameLimits {
  readonly blockGasLimit: bigint;
}

const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

export function decodeSubmission(raw: string, hash: string, limits: DecodeLimits): Submission {
  const type = getBytes(raw)[0]!;
  if (type === 0x03) refuse('blob-not-supported', 'blob transactions (type 0x03) are not accepted: blob sidecars have no data-availability path');
  if (type === FRAME_TX_TYPE) return decodeFrame(raw, hash, limits);
  if (type < 0xc0 && type !== 0x01 && type !== 0x02 && type !== 0x04) {
    refuse('type-unsupported', `transaction type 0x${type.toString(16).padStart(2, '0')} is not supported`);
  }
  return decodeStandard(raw, hash, limits);
}

function decodeStandard(raw: string, hash: string, limits: DecodeLimits): Submission {
  let tx: Transaction;
  try {
    tx = Transaction.from(raw);
  } catch {
    refuse('rlp-invalid', 'the transaction cannot be decoded');
  }
  const signature = tx.signature;
  if (signature === null) refuse('sig-invalid', 'the transaction is not signed');
  if (tx.type === 0 && tx.chainId === 0n) {
    refuse('legacy-not-eip155', 'legacy transactions must be EIP-155 (replay-protected) signed for chain 8141');
  }
  if (tx.chainId !== limits.chainId) refuse('wrong-chain-id', `chain id ${tx.chainId} is not ${limits.chainId}`);
  if (tx.gasLimit > limits.blockGasLimit) {
    refuse('gas-limit', `gas limit ${tx.gasLimit} exceeds the block gas limit ${limits.blockGasLimit}`);
  }
  if (BigInt(signature.s) > SECP256K1_HALF_N) refuse('sig-invalid', 'the signature has a high s value');
  const sender = recoverAddress(getBytes(tx.unsignedHash), getBytes(signature.r), getBytes(signature.s), signature.yParity);
  if (sender === undefined) refuse('sig-invalid', 'no sender can be recovered from the signature');
  const maxFeePerGas = tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
  return {
    raw,
    hash,
    type: tx.type ?? 0,
    nonce: BigInt(tx.nonce),
    sender,
    payer: sender,
    maxFeePerGas,
    maxCost: tx.gasLimit * maxFeePerGas + tx.value,
  };
}

function decodeFrame(raw: string, hash: string, limits: DecodeLimits): Submission {
  const tx = decodeFrameTransaction(raw);
  const facts = checkFrameTransaction(tx, limits);
  if (facts.maxGas > limits.blockGasLimit) {
    refuse('gas-limit', `maximum gas ${facts.maxGas} exceeds the block gas limit ${limits.blockGasLimit}`);
  }
  verifyFrameSignatures(tx);
  // Value leaves the sender; it burdens the payer's balance only when the sender pays.
  const value = facts.payer === tx.sender ? tx.frames.reduce((sum, f) => sum + f.value, 0n) : 0n;
  return {
    raw,
    hash,
    type: FRAME_TX_TYPE,
    nonce: tx.nonce,
    sender: tx.sender,
    payer: facts.payer,
    maxFeePerGas: tx.maxFeePerGas,
    maxCost: facts.maxCost + value,
    frame: { tx, facts },
  };
}
