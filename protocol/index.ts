/**
 * The chain's rules as a library (issue 26): transaction codecs (the standard types and the
 * frame transaction, type 0x06), signature schemes (incl. 0x65 ML-DSA-65), the frame rules and
 * their gas, the public mempool's rules beyond validity (mempool/policy.ts), approval and the
 * direct evaluation of default code. It imports nothing of src/, plugins/ or devnet/
 * (test/protocol/boundary.test.ts). The EIP-8141 EVM is the second door, protocol/evm/index.ts,
 * and a validation prefix run in it under the trace rules the third, protocol/mempool/index.ts:
 * both loaded only where frames run in an EVM.
 */
export { Approvals, NEW_ACCOUNT_STATE_GAS, defaultCodeScope } from './approval.js';
export { logsBloom } from './bloom.js';
export type { BloomedLog } from './bloom.js';
export { codeHashOf, decodeCode } from './code-entry.js';
export { cryptoBackend, nativeBackend, portableBackend, warmRecovery } from './crypto-backend.js';
export type { CryptoBackend } from './crypto-backend.js';
export type { CodeEntry } from './code-entry.js';
export { CHAIN, chainConfig } from './chain.js';
export type { ChainConfig } from './chain.js';
export { evaluateDirectly } from './direct-evaluation.js';
export { PARAMS_BY_EIP, paramsOf } from './params.js';
export type { Params } from './params.js';
export {
  EXPIRY_VERIFIER,
  EXPIRY_VERIFIER_CODE,
  TRANSACTION_EXECUTION_CAP,
  checkNonceBound,
  checkStaticValidity,
  frameGas,
} from './frame-checks.js';
export { PREFIX_GAS_BUDGET, PREFIX_STATE_GAS_BUDGET, checkFrameTransaction } from './mempool/policy.js';
export type { FrameFacts, FrameLimits } from './mempool/policy.js';
export { FRAME_TX_TYPE, FrameMode, blankedEncoding, decodeFrameTransaction, encodeFrameTransaction, withHashes } from './frame-codec.js';
export type { Frame, FrameTransaction, FrameTransactionFields, SignatureEntry } from './frame-codec.js';
export { InvalidFrameRequest, isFrameRequest, readFrameRequest } from './frame-request.js';
export type { FrameGasRequest } from './frame-request.js';
export { bytesOfHex, keccakHex } from './hex.js';
export { SECP256K1_N, recoverAddress, verifyFrameSignatures } from './signatures.js';
export type { SignedFrames } from './signatures.js';
export { authoritiesOf, decodeStandardTransaction } from './standard-codec.js';
export { checkStandardTransaction } from './standard-checks.js';
export type { StandardLimits } from './standard-checks.js';
export { frameRefusal, Refusal, refuse, refuseFrame } from './refusal.js';
export type { StateDependencies } from './refusal.js';
