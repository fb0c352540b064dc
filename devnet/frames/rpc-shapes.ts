/**
 * Executed frame transactions as JSON-RPC objects, in the shapes `ox` reads (Transaction.fromRpc,
 * TransactionReceipt.fromRpc): EIP-8141's receipt (`payer`, `frameReceipts`) inside the usual
 * receipt fields. The receipt payload has no transaction status; `status` here is derived, as
 * the EIP asks of an interface that must show one: 0x1 when no frame failed, 0x0 otherwise.
 */
import { bytesToHex } from '@ethereumjs/util';
import { frameGas, logsBloom } from '../../protocol/index.js';
import { CHAIN_ID } from '../anvil.js';
import type { FrameRecord } from './frame-chain.js';

const hex = (value: bigint | number) => `0x${value.toString(16)}`;

export function frameTransactionRpc(record: FrameRecord): object {
  const { tx } = record;
  return {
    type: '0x6',
    hash: tx.hash,
    chainId: hex(CHAIN_ID),
    nonce: hex(tx.nonce),
    from: tx.sender,
    to: null,
    value: '0x0',
    input: '0x',
    gas: hex(frameGas(tx).maxGas),
    gasPrice: hex(record.executed.effectiveGasPrice),
    maxFeePerGas: hex(tx.maxFeePerGas),
    maxPriorityFeePerGas: hex(tx.maxPriorityFeePerGas),
    maxFeePerBlobGas: hex(tx.maxFeePerBlobGas),
    blobVersionedHashes: tx.blobVersionedHashes,
    frames: tx.frames.map((frame) => ({
      mode: hex(frame.mode),
      flags: hex(frame.flags),
      target: frame.target ?? null,
      executionGas: hex(frame.executionGas),
      stateGas: hex(frame.stateGas),
      value: hex(frame.value),
      data: bytesToHex(frame.data),
    })),
    signatures: tx.signatures.map((entry) => ({
      scheme: hex(entry.scheme),
      signer: entry.signer ?? '0x',
      msg: entry.msg === undefined ? '0x' : bytesToHex(entry.msg),
      signature: bytesToHex(entry.signature),
    })),
    // No signature of the ECDSA kind: zero, as OP Stack deposit transactions show theirs, so
    // that a client parsing every transaction's signature (ethers v6) reads the object.
    v: '0x0',
    r: '0x0',
    s: '0x0',
    yParity: '0x0',
    blockHash: record.blockHash,
    blockNumber: hex(record.blockNumber),
    transactionIndex: hex(record.index),
  };
}

export function frameReceiptRpc(record: FrameRecord): object {
  const { tx, executed } = record;
  let logIndex = record.firstLogIndex;
  const placed = {
    transactionHash: tx.hash,
    transactionIndex: hex(record.index),
    blockHash: record.blockHash,
    blockNumber: hex(record.blockNumber),
    removed: false,
  };
  const logs = executed.frames.flatMap((frame) => frame.logs.map((log) => ({ ...log, ...placed, logIndex: hex(logIndex++) })));
  return {
    type: '0x6',
    transactionHash: tx.hash,
    transactionIndex: hex(record.index),
    blockHash: record.blockHash,
    blockNumber: hex(record.blockNumber),
    from: tx.sender,
    to: null,
    contractAddress: null,
    cumulativeGasUsed: hex(record.cumulativeGasUsed),
    gasUsed: hex(executed.gasUsed),
    effectiveGasPrice: hex(executed.effectiveGasPrice),
    status: executed.frames.some((frame) => frame.status === 0) ? '0x0' : '0x1',
    payer: executed.payer,
    frameReceipts: executed.frames.map((frame) => ({
      status: hex(frame.status),
      gasUsed: hex(frame.executionGas + frame.stateGas),
      executionGasUsed: hex(frame.executionGas),
      stateGasUsed: hex(frame.stateGas),
      logs: frame.logs,
    })),
    logs,
    logsBloom: logsBloom(logs),
  };
}
