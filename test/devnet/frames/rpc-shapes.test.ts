/** Frame transactions read back through the ingress as ox reads them: ox is the oracle. */
import { expect } from 'chai';
import { getAddress, id, JsonRpcProvider, Wallet, zeroPadValue } from 'ethers';
import { Bloom, Transaction, TransactionReceipt, TxEnvelopeEip8141 } from 'ox';
import { startDevnet, type Devnet } from '../../../devnet/devnet.js';
import { createLogger } from '../../../src/log.js';
import { secp256k1Entry, signed } from '../../../support/frames.js';
import { call, receiptOf } from '../../../support/http.js';
import { DEV_KEY } from '../../../support/keys.js';
import { LOGS } from '../../../support/verify-code.js';
import { OPERATOR_TOKEN } from '../../helpers/ingress.js';

const hex = (value: number) => `0x${value.toString(16)}`;

describe('devnet: executed frame transactions through the ingress, as ox reads them (frames/rpc-shapes.ts)', () => {
  let devnet: Devnet;
  let url: string;
  const sender = new Wallet(id('rpc-shapes sender'));
  const recipient = '0x00000000000000000000000000000000000f2a21';
  const LOGGER = '0x00000000000000000000000000000000000f2a22';
  let raw: string;
  let hash: string;

  before(async function () {
    this.timeout(30_000);
    process.env.SVC_OPERATOR_TOKEN = OPERATOR_TOKEN;
    devnet = await startDevnet({ port: 0, metricsPort: 0, node: { commitIntervalMs: 40, blockIntervalMs: 200 } }, createLogger('error'));
    url = devnet.ingress.url;
    await call(devnet.anvil.url, 'anvil_setCode', [LOGGER, LOGS]);
    const funding = await new Wallet(DEV_KEY).signTransaction({
      chainId: 8141,
      nonce: 0,
      to: sender.address,
      value: 10n ** 18n,
      gasLimit: 21_000,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 0n,
      type: 2,
    });
    await receiptOf(url, await call<string>(url, 'eth_sendRawTransaction', [funding]));
    raw = signed(
      {
        sender: sender.address.toLowerCase(),
        fees: [0n, 3_000_000_000n, 0n],
        signatures: [{ scheme: 1 }],
        frames: [
          { mode: 1, flags: 3, executionGas: 10_000n },
          { mode: 2, flags: 0, target: recipient, executionGas: 30_000n, value: 7n, stateGas: 183_600n, data: '0x1234' },
          { mode: 2, flags: 0, target: LOGGER, executionGas: 30_000n },
        ],
      },
      [(digest) => secp256k1Entry(sender.privateKey, digest)],
    );
    hash = await call<string>(url, 'eth_sendRawTransaction', [raw]);
  });
  after(() => devnet?.stop());

  it('answers the receipt: derived status, payer, one receipt per frame', async () => {
    const receipt = TransactionReceipt.fromRpc(await receiptOf<TransactionReceipt.Rpc>(url, hash));
    expect(receipt).to.include({
      status: 'success',
      type: 'eip8141',
      transactionHash: hash,
      payer: sender.address.toLowerCase(),
      to: null,
    });
    expect(receipt.frameReceipts!.map((f) => [f.status, f.stateGasUsed])).to.deep.equal([
      ['success', 0n],
      ['success', 183_600n],
      ['success', 0n],
    ]);
    // The frames' logs, placed in the block as any transaction's are.
    const topic = `0x${'2a'.padStart(64, '0')}`;
    expect(receipt.frameReceipts![2]!.logs).to.deep.equal([{ address: LOGGER, topics: [topic], data: '0x' }]);
    const placed = {
      blockHash: receipt.blockHash,
      blockNumber: receipt.blockNumber,
      transactionHash: hash,
      transactionIndex: receipt.transactionIndex,
      removed: false,
    };
    // EIP-7708's Transfer for the value frame 1 sends, then the logger's, in frame order; the bloom holds both.
    const transfer = {
      address: '0xfffffffffffffffffffffffffffffffffffffffe',
      topics: [id('Transfer(address,address,uint256)'), zeroPadValue(sender.address.toLowerCase(), 32), zeroPadValue(recipient, 32)],
      data: zeroPadValue('0x07', 32),
    };
    expect(receipt.frameReceipts![1]!.logs).to.deep.equal([transfer]);
    expect(receipt.logs).to.deep.equal([
      { ...transfer, ...placed, logIndex: 0 },
      { address: LOGGER, topics: [topic], data: '0x', ...placed, logIndex: 1 },
    ]);
    for (const value of [transfer.address, ...transfer.topics, LOGGER, topic]) {
      expect(Bloom.contains(receipt.logsBloom, value as `0x${string}`), value).to.equal(true);
    }
    // What the payer paid is exactly what the receipt says, plus the value.
    expect(BigInt(await call<string>(url, 'eth_getBalance', [sender.address, 'latest']))).to.equal(
      10n ** 18n - receipt.gasUsed * receipt.effectiveGasPrice - 7n,
    );
    expect(await call(url, 'eth_getBalance', [recipient, 'latest'])).to.equal('0x7');
  });

  it('answers the transaction, which ox re-encodes to the very bytes sent and hashes to its hash', async () => {
    await receiptOf(url, hash);
    const rpcTx = await call<TxEnvelopeEip8141.Rpc & Transaction.Rpc>(url, 'eth_getTransactionByHash', [hash]);
    const envelope = TxEnvelopeEip8141.fromRpc(rpcTx);
    expect(TxEnvelopeEip8141.serialize(envelope)).to.equal(raw);
    expect(TxEnvelopeEip8141.hash(envelope)).to.equal(hash);
    expect(Transaction.fromRpc(rpcTx as Transaction.Rpc)).to.include({
      type: 'eip8141',
      hash,
      from: sender.address.toLowerCase(),
      transactionIndex: 0,
    });
    expect(await call(url, 'eth_getRawTransactionByHash', [hash])).to.equal(raw);
  });

  it('adds the frame transaction to eth_getBlockReceipts, last, as eth_getTransactionReceipt answers it', async () => {
    const receipt = await receiptOf<{ blockNumber: string; blockHash: string }>(url, hash);
    const byNumber = await call<Array<{ transactionHash: string }>>(url, 'eth_getBlockReceipts', [receipt.blockNumber]);
    expect(byNumber.at(-1)).to.deep.equal(receipt);
    expect(await call(url, 'eth_getBlockReceipts', [receipt.blockHash])).to.deep.equal(byNumber);
  });

  it("answers eth_getLogs with the frames' logs that match the filter, in log order", async () => {
    const receipt = await receiptOf<{ blockNumber: string; blockHash: string; logs: unknown[] }>(url, hash);
    const topic = `0x${'2a'.padStart(64, '0')}`;
    const range = { fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber };
    expect(await call(url, 'eth_getLogs', [range])).to.deep.equal(receipt.logs);
    expect(await call(url, 'eth_getLogs', [{ blockHash: receipt.blockHash }])).to.deep.equal(receipt.logs);
    expect(
      await call(url, 'eth_getLogs', [{ fromBlock: '0x0', address: [LOGGER.toUpperCase().replace('0X', '0x')], topics: [[topic]] }]),
    ).to.deep.equal(receipt.logs.slice(1));
    expect(await call(url, 'eth_getLogs', [{ ...range, address: recipient }])).to.deep.equal([]);
    expect(await call(url, 'eth_getLogs', [{ ...range, topics: [null, topic] }])).to.deep.equal([]);
    expect(await call(url, 'eth_getLogs', [{ ...range, topics: [`0x${'2b'.padStart(64, '0')}`] }])).to.deep.equal([]);
  });

  it("merges the frames' logs with anvil's in chain order", async () => {
    const frameReceipt = await receiptOf<{ logs: unknown[] }>(url, hash);
    const later = await new Wallet(DEV_KEY).signTransaction({
      chainId: 8141,
      nonce: 1,
      to: LOGGER,
      gasLimit: 50_000,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 0n,
      type: 2,
    });
    const laterReceipt = await receiptOf<{ logs: unknown[] }>(url, await call<string>(url, 'eth_sendRawTransaction', [later]));
    expect(laterReceipt.logs).to.have.length(1);
    expect(await call(url, 'eth_getLogs', [{ fromBlock: '0x0', address: LOGGER }])).to.deep.equal([
      ...frameReceipt.logs.slice(1),
      ...laterReceipt.logs,
    ]);
  });

  it('lists it in its block, last (hashes; full objects that ox and ethers read), counted and found by index', async () => {
    const receipt = await receiptOf<{ blockNumber: string; blockHash: string; transactionIndex: string }>(url, hash);
    const rpcTx = await call<Transaction.Rpc>(url, 'eth_getTransactionByHash', [hash]);
    const hashes = await call<{ transactions: string[] }>(url, 'eth_getBlockByNumber', [receipt.blockNumber, false]);
    expect(hashes.transactions.at(-1)).to.equal(hash);
    expect(hashes.transactions.indexOf(hash)).to.equal(Number(receipt.transactionIndex));
    const full = await call<{ transactions: Transaction.Rpc[] }>(url, 'eth_getBlockByHash', [receipt.blockHash, true]);
    expect(full.transactions.at(-1)).to.deep.equal(rpcTx);
    expect(Transaction.fromRpc(full.transactions.at(-1)!)).to.include({ type: 'eip8141', hash });
    const count = hex(hashes.transactions.length);
    expect(await call(url, 'eth_getBlockTransactionCountByNumber', [receipt.blockNumber])).to.equal(count);
    expect(await call(url, 'eth_getBlockTransactionCountByHash', [receipt.blockHash])).to.equal(count);
    expect(await call(url, 'eth_getTransactionByBlockNumberAndIndex', [receipt.blockNumber, receipt.transactionIndex])).to.deep.equal(
      rpcTx,
    );
    expect(await call(url, 'eth_getTransactionByBlockHashAndIndex', [receipt.blockHash, receipt.transactionIndex])).to.deep.equal(rpcTx);
    expect(await call(url, 'eth_getRawTransactionByBlockHashAndIndex', [receipt.blockHash, receipt.transactionIndex])).to.equal(raw);
    expect(await call(url, 'eth_getTransactionByBlockHashAndIndex', [receipt.blockHash, count])).to.equal(null);
    // ethers v6 parses every transaction of a full block (TransactionResponse.wait() reads them to find replacements).
    const provider = new JsonRpcProvider(url, 8141, { staticNetwork: true, batchMaxCount: 1 });
    try {
      const block = await provider.getBlock(receipt.blockHash, true);
      expect(block!.prefetchedTransactions.at(-1)).to.include({ hash, type: 6, from: getAddress(sender.address) });
      expect((await provider.getTransaction(hash))!.blockNumber).to.equal(Number(receipt.blockNumber));
    } finally {
      provider.destroy();
    }
  });

  it('still passes an unknown hash to the EL (null)', async () => {
    expect(await call(url, 'eth_getTransactionReceipt', [`0x${'11'.repeat(32)}`])).to.equal(null);
  });
});
