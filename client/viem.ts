/**
 * viem on chain 8141 (`svc-ingress/client/viem`): a chain whose formatters read type 0x6
 * transactions and receipts (`type: 'frame'`, `frames`, `signatures`; `payer`, `frameReceipts`),
 * in blocks too, which viem otherwise reads as an unknown type with `to` null. Any other
 * transaction is formatted as viem formats it.
 *
 *   const client = createPublicClient({ chain: chain8141('http://127.0.0.1:8545'), transport: http() })
 *   const estimate = await estimateFrameGas(viemRequest(client), tx)
 */
import {
  type Block,
  type Chain,
  defineBlock,
  defineChain,
  defineTransaction,
  defineTransactionReceipt,
  formatTransaction,
  type Hash,
  type RpcTransaction,
  type Transaction,
  type TransactionReceipt,
} from 'viem';
import { CHAIN_ID, type Frame, type SignatureEntry } from './frame-transaction.js';
import { type FrameReceiptFields, frameReceiptFieldsFromRpc, frameTransactionFromRpc, isFrameRpc, type Request } from './rpc.js';

type Json = Record<string, unknown>;

/** A transaction as viem reads it on chain 8141: a frame transaction's type, frames and signatures added. */
export type Transaction8141 = Omit<Transaction, 'type'> & {
  readonly type: Transaction['type'] | 'frame';
  readonly frames?: readonly Frame[];
  readonly signatures?: readonly SignatureEntry[];
};
export type TransactionReceipt8141 = Omit<TransactionReceipt, 'type'> & {
  readonly type: TransactionReceipt['type'] | 'frame';
} & Partial<FrameReceiptFields>;
export type Block8141 = Omit<Block, 'transactions'> & { readonly transactions: readonly (Hash | Transaction8141)[] };

const frameTransaction = (args: Json): Transaction8141 =>
  ({ ...frameTransactionFromRpc(args), to: null, value: 0n }) as unknown as Transaction8141;

const formatters = {
  transaction: defineTransaction({
    format: (args: Json): Transaction8141 => (isFrameRpc(args) ? frameTransaction(args) : ({} as Transaction8141)),
  }),
  transactionReceipt: defineTransactionReceipt({
    format: (args: Json): TransactionReceipt8141 =>
      (isFrameRpc(args) ? { ...frameReceiptFieldsFromRpc(args), type: 'frame' } : {}) as TransactionReceipt8141,
  }),
  block: defineBlock({
    format: (args: Json): Block8141 =>
      ({
        transactions: ((args.transactions ?? []) as Array<Hash | Json>).map((tx) =>
          typeof tx === 'string' ? tx : isFrameRpc(tx) ? frameTransaction(tx) : formatTransaction(tx as unknown as RpcTransaction),
        ),
      }) as unknown as Block8141,
  }),
};

/** Chain 8141 as viem knows chains, with the frame formatters. */
export type Chain8141 = Chain<typeof formatters>;

export function chain8141(rpcUrl = 'http://127.0.0.1:8545'): Chain8141 {
  return defineChain({
    id: Number(CHAIN_ID),
    name: `chain ${CHAIN_ID}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    formatters,
  });
}

/** A viem client's `request` as the module's `Request`. */
export const viemRequest =
  (client: { request: (args: never) => Promise<unknown> }): Request =>
  (method, params) =>
    client.request({ method, params } as never);
