/**
 * svc-ingress/client: frame transactions (type 0x6) for wallets and dapps on chain 8141. Build
 * one with the chain's JSON field names, ask the node for each frame's gas
 * (`estimateFrameGas`), sign its entries (`signFrameTransaction` with `mldsa65Signer` or
 * `secp256k1Signer`), encode it for eth_sendRawTransaction, and read it back. viem:
 * `svc-ingress/client/viem`; ethers: `svc-ingress/client/ethers`.
 */
export {
  CHAIN_ID,
  decodeFrameTransaction,
  encodeFrameTransaction,
  FRAME_FLAGS,
  FRAME_MODE,
  frameSignatureHash,
  frameTransactionHash,
  SIGNATURE_SCHEME,
} from './frame-transaction.js';
export type { Address, Frame, FrameTransaction, Hex, SignatureEntry } from './frame-transaction.js';
export {
  estimateFrameGas,
  frameReceiptFieldsFromRpc,
  frameTransactionFromRpc,
  frameTransactionRequest,
  isFrameRpc,
  withFrameGas,
} from './rpc.js';
export type { FrameGasEstimate, FrameReceipt, FrameReceiptFields, FrameTransactionRpc, Request } from './rpc.js';
export { mldsa65Signer, secp256k1Signer, signFrameTransaction } from './signers.js';
export type { FrameSigner } from './signers.js';
