/**
 * The JSON-RPC side: a frame transaction as a request (svc_estimateFrameGas, eth_estimateGas),
 * the estimate, and frame transactions and receipts read back, quantities as bigint. `Request`
 * is any client's call: viem `(method, params) => client.request({ method, params })`, ethers
 * `(method, params) => provider.send(method, params)`.
 */
import type { Address, Frame, FrameTransaction, Hex, SignatureEntry } from './frame-transaction.js';

export type Request = (method: string, params: unknown[]) => Promise<unknown>;

const hex = (value: bigint | number): Hex => `0x${value.toString(16)}`;
const big = (value: unknown): bigint => BigInt(value as string);

/** `tx` as the estimate request names it: absent limits, nonce, fees and signatures left out. */
export function frameTransactionRequest(tx: FrameTransaction): Record<string, unknown> {
  const defined = (entries: Array<[string, unknown]>) => Object.fromEntries(entries.filter(([, v]) => v !== undefined));
  return defined([
    ['type', '0x6'],
    ['chainId', tx.chainId === undefined ? undefined : hex(tx.chainId)],
    ['from', tx.from],
    ['nonce', tx.nonce === undefined ? undefined : hex(tx.nonce)],
    ['maxFeePerGas', tx.maxFeePerGas === undefined ? undefined : hex(tx.maxFeePerGas)],
    ['maxPriorityFeePerGas', tx.maxPriorityFeePerGas === undefined ? undefined : hex(tx.maxPriorityFeePerGas)],
    [
      'frames',
      tx.frames.map((f) =>
        defined([
          ['mode', hex(f.mode)],
          ['flags', hex(f.flags ?? 0)],
          ['target', f.target],
          ['executionGas', f.executionGas === undefined ? undefined : hex(f.executionGas)],
          ['stateGas', f.stateGas === undefined ? undefined : hex(f.stateGas)],
          ['value', f.value === undefined ? undefined : hex(f.value)],
          ['data', f.data],
        ]),
      ),
    ],
    [
      'signatures',
      (tx.signatures ?? []).map((e) =>
        defined([
          ['scheme', hex(e.scheme)],
          ['signer', e.signer],
          ['msg', e.msg],
          ['signature', e.signature],
        ]),
      ),
    ],
  ]);
}

export interface FrameGasEstimate {
  readonly frames: readonly { readonly executionGas: bigint; readonly stateGas: bigint }[];
  /** The transaction's max gas with those limits. */
  readonly gas: bigint;
}

/** svc_estimateFrameGas: each frame's limits (those given kept) and the transaction's max gas. */
export async function estimateFrameGas(request: Request, tx: FrameTransaction, block: string = 'latest'): Promise<FrameGasEstimate> {
  const answer = (await request('svc_estimateFrameGas', [frameTransactionRequest(tx), block])) as {
    frames: Array<{ executionGas: string; stateGas: string }>;
    gas: string;
  };
  return { frames: answer.frames.map((f) => ({ executionGas: big(f.executionGas), stateGas: big(f.stateGas) })), gas: big(answer.gas) };
}

/** `tx` with each frame's limits set from the estimate. */
export function withFrameGas(tx: FrameTransaction, estimate: FrameGasEstimate): FrameTransaction {
  return { ...tx, frames: tx.frames.map((f, i) => ({ ...f, ...estimate.frames[i]! })) };
}

/** A frame transaction as the chain answers it (eth_getTransactionByHash, full blocks), quantities as bigint. */
export interface FrameTransactionRpc extends Required<Omit<FrameTransaction, 'signatures'>> {
  readonly type: 'frame';
  readonly hash: Hex;
  readonly signatures: readonly SignatureEntry[];
  readonly blockHash: Hex | null;
  readonly blockNumber: bigint | null;
  readonly transactionIndex: number | null;
}

const optionalAddress = (value: unknown): Address | undefined =>
  value === null || value === undefined || value === '0x' ? undefined : (value as Address);

export function frameFromRpc(frame: Record<string, unknown>): Frame {
  return {
    mode: Number(frame.mode),
    flags: Number(frame.flags ?? 0),
    ...(optionalAddress(frame.target) === undefined ? {} : { target: optionalAddress(frame.target)! }),
    executionGas: big(frame.executionGas ?? '0x0'),
    stateGas: big(frame.stateGas ?? '0x0'),
    value: big(frame.value ?? '0x0'),
    data: (frame.data ?? '0x') as Hex,
  };
}

export function frameTransactionFromRpc(rpc: Record<string, unknown>): FrameTransactionRpc {
  return {
    type: 'frame',
    hash: rpc.hash as Hex,
    chainId: big(rpc.chainId),
    nonce: big(rpc.nonce),
    from: rpc.from as Address,
    frames: (rpc.frames as Array<Record<string, unknown>>).map(frameFromRpc),
    signatures: ((rpc.signatures ?? []) as Array<Record<string, unknown>>).map((e) => ({
      scheme: Number(e.scheme),
      ...(optionalAddress(e.signer) === undefined ? {} : { signer: optionalAddress(e.signer)! }),
      ...(e.msg === undefined || e.msg === null || e.msg === '0x' ? {} : { msg: e.msg as Hex }),
      signature: (e.signature ?? '0x') as Hex,
    })),
    maxPriorityFeePerGas: big(rpc.maxPriorityFeePerGas),
    maxFeePerGas: big(rpc.maxFeePerGas),
    blockHash: (rpc.blockHash ?? null) as Hex | null,
    blockNumber: rpc.blockNumber === null || rpc.blockNumber === undefined ? null : big(rpc.blockNumber),
    transactionIndex: rpc.transactionIndex === null || rpc.transactionIndex === undefined ? null : Number(rpc.transactionIndex),
  };
}

/** One frame's receipt: `skipped` for a frame an earlier failure in its atomic batch left unrun. */
export interface FrameReceipt {
  readonly status: 'reverted' | 'success' | 'skipped';
  readonly gasUsed: bigint;
  readonly executionGasUsed: bigint;
  readonly stateGasUsed: bigint;
  readonly logs: readonly { readonly address: Address; readonly topics: readonly Hex[]; readonly data: Hex }[];
}

/** The receipt fields a frame transaction adds: who paid, and each frame's receipt. */
export interface FrameReceiptFields {
  readonly payer: Address;
  readonly frameReceipts: readonly FrameReceipt[];
}

const FRAME_STATUS = ['reverted', 'success', 'skipped'] as const;

export function frameReceiptFieldsFromRpc(rpc: Record<string, unknown>): FrameReceiptFields {
  return {
    payer: rpc.payer as Address,
    frameReceipts: (rpc.frameReceipts as Array<Record<string, unknown>>).map((f) => ({
      status: FRAME_STATUS[Number(f.status)] ?? 'reverted',
      gasUsed: big(f.gasUsed),
      executionGasUsed: big(f.executionGasUsed),
      stateGasUsed: big(f.stateGasUsed),
      logs: f.logs as FrameReceipt['logs'],
    })),
  };
}

/** Whether an RPC transaction or receipt object is a frame transaction's. */
export const isFrameRpc = (rpc: { readonly type?: unknown } | null | undefined): boolean => rpc?.type === '0x6' || rpc?.type === '0x06';
