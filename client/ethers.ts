/**
 * ethers v6 and frame transactions (`svc-ingress/client/ethers`): ethers cannot parse type 0x6
 * (`broadcastTransaction(raw)` throws after the transaction was sent, and a wallet that retries
 * sends it twice), so these go through `provider.send` and read the answers with the module.
 */
import type { JsonRpcApiProvider } from 'ethers';
import { encodeFrameTransaction, type FrameTransaction, type Hex } from './frame-transaction.js';
import {
  type FrameReceiptFields,
  frameReceiptFieldsFromRpc,
  frameTransactionFromRpc,
  type FrameTransactionRpc,
  type Request,
} from './rpc.js';

/** A provider's `send` as the module's `Request`. */
export const ethersRequest =
  (provider: JsonRpcApiProvider): Request =>
  (method, params) =>
    provider.send(method, params);

/** Sends a signed frame transaction (or its raw bytes) and answers its hash; nothing is parsed. */
export async function sendFrameTransaction(provider: JsonRpcApiProvider, tx: FrameTransaction | Hex): Promise<Hex> {
  return (await provider.send('eth_sendRawTransaction', [typeof tx === 'string' ? tx : encodeFrameTransaction(tx)])) as Hex;
}

export async function getFrameTransaction(provider: JsonRpcApiProvider, hash: Hex): Promise<FrameTransactionRpc | null> {
  const rpc = (await provider.send('eth_getTransactionByHash', [hash])) as Record<string, unknown> | null;
  return rpc === null ? null : frameTransactionFromRpc(rpc);
}

export interface FrameTransactionReceipt extends FrameReceiptFields {
  readonly transactionHash: Hex;
  readonly blockNumber: bigint;
  readonly blockHash: Hex;
  /** Success when no frame failed. */
  readonly status: 'success' | 'reverted';
  readonly gasUsed: bigint;
  readonly effectiveGasPrice: bigint;
}

/** Polls for the receipt of `hash` until it comes or `timeoutMs` passes (then throws). */
export async function waitForFrameReceipt(
  provider: JsonRpcApiProvider,
  hash: Hex,
  { timeoutMs = 60_000, pollMs = 250 }: { timeoutMs?: number; pollMs?: number } = {},
): Promise<FrameTransactionReceipt> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const rpc = (await provider.send('eth_getTransactionReceipt', [hash])) as Record<string, unknown> | null;
    if (rpc !== null) {
      return {
        ...frameReceiptFieldsFromRpc(rpc),
        transactionHash: rpc.transactionHash as Hex,
        blockNumber: BigInt(rpc.blockNumber as string),
        blockHash: rpc.blockHash as Hex,
        status: rpc.status === '0x1' ? 'success' : 'reverted',
        gasUsed: BigInt(rpc.gasUsed as string),
        effectiveGasPrice: BigInt(rpc.effectiveGasPrice as string),
      };
    }
    if (Date.now() > deadline) throw new Error(`no receipt for ${hash} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
