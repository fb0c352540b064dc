/**
 * Real clients, unmodified, against the real ingress in front of a real anvil: ethers v6 (with
 * batching off), viem and cast read chain 8141 (chain id, balances, blocks, logs, receipts) and
 * send a signed transfer that gets mined. Each client signs with its own development key.
 */
import { expect } from 'chai';
import { JsonRpcProvider, keccak256, Wallet, zeroPadValue } from 'ethers';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createPublicClient, createWalletClient, defineChain, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS, useAnvil } from '../helpers/el.js';
import { call, receiptOf } from '../helpers/http.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const CAST = join(dirname(createRequire(import.meta.url).resolve('@foundry-rs/cast-linux-amd64/package.json')), 'bin', 'cast');
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const TOPIC = keccak256('0x5356432d494e47524553532d4c4f47'); // keccak256("SVC-INGRESS-LOG")
/** Init code that stores 42, emits LOG1(TOPIC) over those 32 bytes, and deploys nothing. */
const LOG_EMITTER = `0x602a6000527f${TOPIC.slice(2)}60206000a100`;

describe('real clients through the ingress', () => {
  const anvil = useAnvil();
  let ingress: TestIngress;
  let logBlock: number;
  let logTx: string;

  before(async () => {
    ingress = await startTestIngress(testConfig(anvil.current.url));
    // One transaction that emits a log, sent through the ingress like any client's.
    const deployer = new Wallet(DEV_KEYS[4]);
    const raw = await deployer.signTransaction({
      chainId: 8141, nonce: 0, data: LOG_EMITTER, gasLimit: 100_000, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 0n, type: 2,
    });
    logTx = await call<string>(ingress.url, 'eth_sendRawTransaction', [raw]);
    logBlock = Number((await receiptOf(ingress.url, logTx)).blockNumber);
  });
  after(() => ingress.shutdown());

  /** The raw bytes of a mined transaction hash to the hash the client was given. */
  const expectHashOfRawBytes = async (hash: string) => {
    const raw = await call<string>(anvil.current.url, 'eth_getRawTransactionByHash', [hash]);
    expect(keccak256(raw)).to.equal(hash);
  };

  describe('ethers v6 (batchMaxCount: 1)', () => {
    let provider: JsonRpcProvider;
    before(() => {
      provider = new JsonRpcProvider(ingress.url, undefined, { batchMaxCount: 1 });
    });
    after(() => provider.destroy());

    it('reads chain id 0x1fcd, a balance, a block, logs and a receipt', async () => {
      expect((await provider.getNetwork()).chainId).to.equal(8141n);
      expect(await provider.getBalance(new Wallet(DEV_KEYS[1]).address) > 0n).to.equal(true);
      const block = await provider.getBlock(logBlock);
      expect(block!.number).to.equal(logBlock);
      const logs = await provider.getLogs({ fromBlock: logBlock, toBlock: logBlock, topics: [TOPIC] });
      expect(logs).to.have.length(1);
      expect(logs[0]!.data).to.equal(zeroPadValue('0x2a', 32));
      expect((await provider.getTransactionReceipt(logTx))!.status).to.equal(1);
    });

    it('is told the chain is fee-blind: no priority fee', async () => {
      expect((await provider.getFeeData()).maxPriorityFeePerGas).to.equal(0n);
    });

    it('sends a signed transfer that gets mined, its hash keccak-256 of the raw bytes', async () => {
      const wallet = new Wallet(DEV_KEYS[1], provider);
      const sent = await wallet.sendTransaction({ to: RECIPIENT, value: 1_000n });
      const receipt = await sent.wait();
      expect(receipt!.status).to.equal(1);
      expect(receipt!.hash).to.equal(sent.hash);
      await expectHashOfRawBytes(sent.hash);
    });
  });

  describe('viem', () => {
    const chain = defineChain({
      id: 8141,
      name: 'chain 8141',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: ['http://127.0.0.1'] } },
    });

    it('reads chain id 0x1fcd, a balance, a block, logs and a receipt', async () => {
      const client = createPublicClient({ chain, transport: http(ingress.url) });
      expect(await client.getChainId()).to.equal(8141);
      expect((await client.getBalance({ address: privateKeyToAccount(DEV_KEYS[2]).address })) > 0n).to.equal(true);
      expect((await client.getBlock({ blockNumber: BigInt(logBlock) })).number).to.equal(BigInt(logBlock));
      const logs = await client.getLogs({ fromBlock: BigInt(logBlock), toBlock: BigInt(logBlock) });
      expect(logs.map((l) => l.topics[0])).to.deep.equal([TOPIC]);
      expect((await client.getTransactionReceipt({ hash: logTx as `0x${string}` })).status).to.equal('success');
    });

    it('sends a signed transfer that gets mined, its hash keccak-256 of the raw bytes', async () => {
      const client = createPublicClient({ chain, transport: http(ingress.url) });
      const wallet = createWalletClient({ chain, transport: http(ingress.url), account: privateKeyToAccount(DEV_KEYS[2]) });
      const hash = await wallet.sendTransaction({ to: RECIPIENT, value: 1_000n });
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      expect(receipt.status).to.equal('success');
      await expectHashOfRawBytes(hash);
    });
  });

  describe('cast', () => {
    const cast = async (...args: string[]) =>
      (await promisify(execFile)(CAST, [...args, '--rpc-url', ingress.url], { timeout: 20_000 })).stdout.trim();

    it('reads chain id 8141, a balance, a block, logs and a receipt', async () => {
      expect(await cast('chain-id')).to.equal('8141');
      expect(BigInt(await cast('balance', new Wallet(DEV_KEYS[3]).address)) > 0n).to.equal(true);
      expect(JSON.parse(await cast('block', String(logBlock), '--json')).number).to.equal(`0x${logBlock.toString(16)}`);
      const logs = JSON.parse(await cast('logs', '--from-block', String(logBlock), '--to-block', String(logBlock), TOPIC, '--json'));
      expect(logs).to.have.length(1);
      expect(JSON.parse(await cast('receipt', logTx, '--json')).status).to.equal('0x1');
    });

    it('sends a signed transfer that gets mined, its hash keccak-256 of the raw bytes', async () => {
      const receipt = JSON.parse(await cast('send', RECIPIENT, '--value', '1000', '--private-key', DEV_KEYS[3], '--json'));
      expect(receipt.status).to.equal('0x1');
      await expectHashOfRawBytes(receipt.transactionHash);
    });
  });
});
