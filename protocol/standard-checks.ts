/**
 * Static validity of a decoded standard transaction (legacy with EIP-155, 0x01, 0x02, 0x04): what
 * makes it invalid in any block of this chain, whatever the state, so that an EL would skip it
 * after consensus ordered it. The frame transaction's counterpart is frame-checks.ts. No state
 * access; its sender is recovered afterwards (signatures.ts), once these have passed.
 */
import { CHAIN } from './chain.js';
import { checkNonceBound } from './frame-checks.js';
import { refuse } from './refusal.js';
import { SECP256K1_N } from './signatures.js';
import type { StandardTransaction } from './standard-codec.js';

/** What a transaction is checked against: the chain's id and its block gas limit. */
export interface StandardLimits {
  readonly chainId: bigint;
  readonly blockGasLimit: bigint;
}

const SECP256K1_HALF_N = SECP256K1_N >> 1n;

export function checkStandardTransaction(tx: StandardTransaction, limits: StandardLimits): void {
  if (tx.chainId !== limits.chainId) refuse('wrong-chain-id', `chain id ${tx.chainId} is not ${limits.chainId}`);
  checkNonceBound(tx.nonce);
  if (tx.gasLimit > limits.blockGasLimit) {
    refuse('gas-limit', `gas limit ${tx.gasLimit} exceeds the block gas limit ${limits.blockGasLimit}`);
  }
  if (tx.gasLimit > CHAIN.transactionGasCap) {
    refuse('gas-cap', `gas limit ${tx.gasLimit} exceeds the transaction gas cap ${CHAIN.transactionGasCap} (EIP-7825)`);
  }
  if (tx.initCodeBytes !== undefined && tx.initCodeBytes > CHAIN.maxInitCodeBytes) {
    refuse('initcode-size', `init code of ${tx.initCodeBytes} bytes exceeds ${CHAIN.maxInitCodeBytes} (EIP-3860)`);
  }
  // Below it the EL skips the transaction, and its nonce stays taken.
  if (tx.gasLimit < tx.minimumGas) {
    refuse('intrinsic-gas', `intrinsic gas too low: gas limit ${tx.gasLimit} is below the transaction's intrinsic gas ${tx.minimumGas}`);
  }
  if (tx.r === 0n || tx.r >= SECP256K1_N || tx.s === 0n || tx.s >= SECP256K1_N) refuse('sig-invalid', 'the signature is out of range');
  // EIP-2: a high s has a twin signature of the same transaction, which would hash differently.
  if (tx.s > SECP256K1_HALF_N) refuse('sig-invalid', 'the signature has a high s value');
}
