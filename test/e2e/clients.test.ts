/**
 * Real clients, unmodified, read chain 8141 and send a transfer through the real ingress (the
 * production plugin chain) in front of a real anvil (automine): ethers v6 (batching off, as
 * docs/clients.md asks of it), viem, and the `cast` binary. Each reads the chain id, a balance, a block,
 * logs and a receipt, and checks them against what anvil answers directly; each sends a signed
 * transfer from its own development key, which gets mined.
 *
 * The clients talk to the ingress through a recording forwarder, so the test sees the exact bytes
 * each client sent and the exact answer the ingress gave: the hash of a submission is checked
 * against keccak-256 of the raw bytes the client signed, not against anything the client derives.
 */
import { expect } from 'chai';
import { JsonRpcProvider, keccak256, Network, Transaction, Wallet, zeroPadValue } from 'ethers';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { request } from 'undici';
import { createPublicClient, createWalletClient, defineChain, http, type Chain, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CAST_BIN } from '../../support/child.js';
import { call, receiptOf } from '../../support/http.js';
import { DEV_KEYS } from '../../support/keys.js';
import { useAnvil } from '../helpers/el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const runFile = promisify(execFile);

/** One key per client, so their nonces never meet; key 4 deploys the log emitter. */
const KEYS = { ethers: DEV_KEYS[1], viem: DEV_KEYS[2], cast: DEV_KEYS[3], deployer: DEV_KEYS[4] } as const;
/** A fresh recipient per client (empty before), so each balance afterwards is exactly the value sent. */
const RECIPIENTS = {
  ethers: '0x00000000000000000000000000000000000e7e01',
  viem: '0x00000000000000000000000000000000000e7e02',
  cast: '0x00000000000000000000000000000000000e7e03',
} as const;
const VALUE = 1_234_567n;

/** keccak256("svc-ingress e2e log"), written out so that the init code below is literal. */
const TOPIC = keccak256(new TextEncoder().encode('svc-ingress e2e log'));
/**
 * Init code of a contract creation that emits one log and deploys no code:
 *   PUSH1 0x2a PUSH1 0x00 MSTORE         memory[0..32] = 42
 *   PUSH32 TOPIC PUSH1 0x20 PUSH1 0x00   stack: offset 0, size 32, topic
 *   LOG1 STOP
 */
const LOG_EMITTER_INIT = `0x602a600052 7f${TOPIC.slice(2)} 6020 6000 a1 00`.replace(/ /g, '');
const LOG_DATA = zeroPadValue('0x2a', 32);

interface Exchange {
  readonly request: string;
  readonly response: string;
}

/** A byte-for-byte forwarder in front of the ingress that keeps every request and its answer. */
async function startRecorder(targetUrl: string) {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      try {
        const reply = await request(targetUrl, {
          method: 'POST',
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
          body,
        });
        const answer = Buffer.from(await reply.body.arrayBuffer());
        exchanges.push({ request: body.toString(), response: answer.toString() });
        res.writeHead(reply.statusCode, { 'content-type': 'application/json' }).end(answer);
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('e2e: real clients read chain 8141 and send a transfer through the ingress', function () {
  this.timeout(30_000);
  const anvil = useAnvil();
  let ingress: TestIngress;
  let recorder: Awaited<ReturnType<typeof startRecorder>>;
  /** What anvil itself says about the log-emitting creation, asked directly. */
  let logTx: { hash: string; block: number; blockHash: string; emitter: string };

  before(async () => {
    ingress = await startTestIngress(testConfig(anvil.current.url));
    recorder = await startRecorder(ingress.url);
    // The log emitter goes in through the ingress like any client's transaction.
    const raw = await new Wallet(KEYS.deployer).signTransaction({
      type: 2,
      chainId: 8141,
      nonce: 0,
      data: LOG_EMITTER_INIT,
      gasLimit: 100_000,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 0n,
    });
    const hash = await call<string>(ingress.url, 'eth_sendRawTransaction', [raw]);
    expect(hash).to.equal(keccak256(raw));
    const receipt = await receiptOf<{ status: string; blockNumber: string; blockHash: string; contractAddress: string }>(
      anvil.current.url,
      hash,
    );
    expect(receipt.status).to.equal('0x1');
    logTx = { hash, block: Number(receipt.blockNumber), blockHash: receipt.blockHash, emitter: receipt.contractAddress };
  });

  after(async () => {
    await recorder?.close();
    await ingress?.shutdown();
  });

  /** anvil's own answer, asked directly: the ground truth every client read is compared with. */
  const direct = <T>(method: string, params: unknown[] = []) => call<T>(anvil.current.url, method, params);

  /**
   * The client's submission as it crossed the wire: exactly one eth_sendRawTransaction whose
   * answer is `hash`. Returns its raw bytes.
   */
  const submittedRaw = (hash: string): string => {
    const matches = recorder.exchanges.filter((x) => {
      const req = JSON.parse(x.request) as { method?: string };
      return req.method === 'eth_sendRawTransaction' && (JSON.parse(x.response) as { result?: string }).result === hash;
    });
    expect(matches, `one eth_sendRawTransaction answered with ${hash}`).to.have.length(1);
    return (JSON.parse(matches[0]!.request) as { params: [string] }).params[0];
  };

  /**
   * The ingress's answer to the submission is keccak-256 of the raw signed bytes, and is the hash
   * in the receipt; the bytes are a chain-8141 transfer from `key` to `to` of VALUE.
   */
  const expectSubmission = async (hash: string, key: string, to: string) => {
    const raw = submittedRaw(hash);
    expect(keccak256(raw)).to.equal(hash);
    const tx = Transaction.from(raw);
    expect(tx.chainId).to.equal(8141n);
    expect(tx.from).to.equal(new Wallet(key).address);
    expect(tx.to!.toLowerCase()).to.equal(to.toLowerCase());
    expect(tx.value).to.equal(VALUE);
    const receipt = await direct<{ transactionHash: string; status: string }>('eth_getTransactionReceipt', [hash]);
    expect(receipt.transactionHash).to.equal(hash);
    expect(receipt.status).to.equal('0x1');
    expect(BigInt(await direct<string>('eth_getBalance', [to, 'latest']))).to.equal(VALUE);
    return tx;
  };

  describe('ethers v6', () => {
    let provider: JsonRpcProvider;
    let plain: JsonRpcProvider;
    before(() => {
      // Known network: no eth_chainId probe before each first call.
      provider = new JsonRpcProvider(recorder.url, undefined, { batchMaxCount: 1, staticNetwork: Network.from(8141) });
      // Plain: nothing but batching turned off; ethers detects the network itself.
      plain = new JsonRpcProvider(recorder.url, undefined, { batchMaxCount: 1 });
    });
    after(() => {
      provider.destroy();
      plain.destroy();
    });

    it('a plain provider configured only with batchMaxCount: 1 detects chain 8141 and reads through the ingress', async () => {
      const from = recorder.exchanges.length;
      const [network, head, balance] = await Promise.all([
        plain.getNetwork(),
        plain.getBlockNumber(),
        plain.getBalance(new Wallet(KEYS.ethers).address),
      ]);
      expect(network.chainId).to.equal(8141n);
      expect(head).to.equal(Number(await direct<string>('eth_blockNumber')));
      expect(balance).to.equal(BigInt(await direct<string>('eth_getBalance', [new Wallet(KEYS.ethers).address, 'latest'])));
      // Concurrent calls, yet one JSON-RPC object per HTTP call, and every one answered.
      const sent = recorder.exchanges.slice(from);
      expect(sent.length).to.be.greaterThan(0);
      for (const { request: body, response } of sent) {
        expect(body.trimStart().startsWith('{'), body).to.equal(true);
        expect(JSON.parse(response)).to.have.property('result');
      }
    });

    it('left at its default batching, concurrent calls go out as one batch and are refused: why batchMaxCount: 1 is needed', async () => {
      const batching = new JsonRpcProvider(ingress.url, undefined, { staticNetwork: Network.from(8141) });
      try {
        const outcomes = await Promise.allSettled([batching.getBlockNumber(), batching.getBalance(new Wallet(KEYS.ethers).address)]);
        expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as { error?: unknown }).error)).to.deep.equal([
          {
            code: -32600,
            message:
              'batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)',
          },
          {
            code: -32600,
            message:
              'batch requests are not supported: send one JSON-RPC request per HTTP call (ethers v6: batchMaxCount: 1; viem: leave batch off)',
          },
        ]);
      } finally {
        batching.destroy();
      }
    });

    it('reads chain id 0x1fcd, a balance, a block, logs and a receipt as anvil holds them', async () => {
      expect(await provider.send('eth_chainId', [])).to.equal('0x1fcd');
      expect((await provider.getNetwork()).chainId).to.equal(8141n);

      const holder = new Wallet(KEYS.ethers).address;
      expect(await provider.getBalance(holder)).to.equal(BigInt(await direct<string>('eth_getBalance', [holder, 'latest'])));

      const block = await provider.getBlock(logTx.block);
      expect(block!.number).to.equal(logTx.block);
      expect(block!.hash).to.equal(logTx.blockHash);
      expect(block!.transactions).to.deep.equal([logTx.hash]);

      const logs = await provider.getLogs({ fromBlock: logTx.block, toBlock: logTx.block, topics: [TOPIC] });
      expect(logs.map((l) => [l.address.toLowerCase(), l.topics, l.data, l.transactionHash, l.blockHash])).to.deep.equal([
        [logTx.emitter.toLowerCase(), [TOPIC], LOG_DATA, logTx.hash, logTx.blockHash],
      ]);

      const receipt = await provider.getTransactionReceipt(logTx.hash);
      expect(receipt!.status).to.equal(1);
      expect(receipt!.hash).to.equal(logTx.hash);
      expect(receipt!.contractAddress!.toLowerCase()).to.equal(logTx.emitter.toLowerCase());
      expect(receipt!.logs).to.have.length(1);
    });

    it('is told the chain is fee-blind: getFeeData() has maxPriorityFeePerGas 0 and the base fee as gas price', async () => {
      const fees = await provider.getFeeData();
      const latest = await direct<{ baseFeePerGas: string }>('eth_getBlockByNumber', ['latest', false]);
      expect(fees.maxPriorityFeePerGas).to.equal(0n);
      expect(fees.gasPrice).to.equal(BigInt(latest.baseFeePerGas));
      // ethers' own rule: twice the base fee plus the (zero) tip.
      expect(fees.maxFeePerGas).to.equal(2n * BigInt(latest.baseFeePerGas));
    });

    it("sends a signed transfer that gets mined; the hash returned is keccak-256 of the raw bytes and the receipt's", async () => {
      const wallet = new Wallet(KEYS.ethers, provider);
      const sent = await wallet.sendTransaction({ to: RECIPIENTS.ethers, value: VALUE });
      const receipt = await sent.wait(1, 10_000);
      expect(receipt!.status).to.equal(1);
      expect(receipt!.hash).to.equal(sent.hash);
      const tx = await expectSubmission(sent.hash, KEYS.ethers, RECIPIENTS.ethers);
      // It took the ingress's advice: no priority fee offered.
      expect(tx.maxPriorityFeePerGas).to.equal(0n);
    });
  });

  describe('viem', () => {
    let chain: Chain;
    before(() => {
      chain = defineChain({
        id: 8141,
        name: 'svc-ingress devnet',
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [recorder.url] } },
      });
    });

    it('reads chain id 0x1fcd, a balance, a block, logs and a receipt as anvil holds them', async () => {
      const client = createPublicClient({ chain, transport: http(recorder.url) });
      expect(await client.request({ method: 'eth_chainId' })).to.equal('0x1fcd');
      expect(await client.getChainId()).to.equal(8141);

      const holder = privateKeyToAccount(KEYS.viem).address;
      expect(await client.getBalance({ address: holder })).to.equal(BigInt(await direct<string>('eth_getBalance', [holder, 'latest'])));

      const block = await client.getBlock({ blockNumber: BigInt(logTx.block) });
      expect(block.hash).to.equal(logTx.blockHash);
      expect(block.transactions).to.deep.equal([logTx.hash]);

      const logs = await client.getLogs({ address: logTx.emitter as Hex, fromBlock: BigInt(logTx.block), toBlock: BigInt(logTx.block) });
      expect(logs.map((l) => [l.topics, l.data, l.transactionHash, l.blockHash])).to.deep.equal([
        [[TOPIC], LOG_DATA, logTx.hash, logTx.blockHash],
      ]);

      const receipt = await client.getTransactionReceipt({ hash: logTx.hash as Hex });
      expect(receipt.status).to.equal('success');
      expect(receipt.transactionHash).to.equal(logTx.hash);
      expect(receipt.contractAddress?.toLowerCase()).to.equal(logTx.emitter.toLowerCase());
    });

    it("sends a signed transfer that gets mined; the hash returned is keccak-256 of the raw bytes and the receipt's", async () => {
      const client = createPublicClient({ chain, transport: http(recorder.url) });
      const wallet = createWalletClient({ chain, transport: http(recorder.url), account: privateKeyToAccount(KEYS.viem) });
      const hash = await wallet.sendTransaction({ to: RECIPIENTS.viem, value: VALUE });
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10_000 });
      expect(receipt.status).to.equal('success');
      expect(receipt.transactionHash).to.equal(hash);
      const tx = await expectSubmission(hash, KEYS.viem, RECIPIENTS.viem);
      expect(tx.maxPriorityFeePerGas).to.equal(0n);
    });
  });

  describe('cast', () => {
    const cast = async (...args: string[]) =>
      (await runFile(CAST_BIN, [...args, '--rpc-url', recorder.url], { timeout: 20_000 })).stdout.trim();

    it('reads chain id 8141, a balance, a block, logs and a receipt as anvil holds them', async () => {
      expect(await cast('chain-id')).to.equal('8141');
      expect(JSON.parse(await cast('rpc', 'eth_chainId'))).to.equal('0x1fcd');

      const holder = new Wallet(KEYS.cast).address;
      expect(BigInt(await cast('balance', holder))).to.equal(BigInt(await direct<string>('eth_getBalance', [holder, 'latest'])));

      const block = JSON.parse(await cast('block', String(logTx.block), '--json')) as {
        number: string;
        hash: string;
        transactions: string[];
      };
      expect(block.number).to.equal(`0x${logTx.block.toString(16)}`);
      expect(block.hash).to.equal(logTx.blockHash);
      expect(block.transactions).to.deep.equal([logTx.hash]);

      const logs = JSON.parse(
        await cast('logs', '--from-block', String(logTx.block), '--to-block', String(logTx.block), TOPIC, '--json'),
      ) as Array<{ address: string; topics: string[]; data: string; transactionHash: string }>;
      expect(logs.map((l) => [l.address.toLowerCase(), l.topics, l.data, l.transactionHash])).to.deep.equal([
        [logTx.emitter.toLowerCase(), [TOPIC], LOG_DATA, logTx.hash],
      ]);

      const receipt = JSON.parse(await cast('receipt', logTx.hash, '--json')) as {
        status: string;
        transactionHash: string;
        contractAddress: string;
      };
      expect(receipt.status).to.equal('0x1');
      expect(receipt.transactionHash).to.equal(logTx.hash);
      expect(receipt.contractAddress.toLowerCase()).to.equal(logTx.emitter.toLowerCase());
    });

    it("sends a signed transfer that gets mined; the hash returned is keccak-256 of the raw bytes and the receipt's", async () => {
      const receipt = JSON.parse(await cast('send', RECIPIENTS.cast, '--value', String(VALUE), '--private-key', KEYS.cast, '--json')) as {
        status: string;
        transactionHash: string;
      };
      expect(receipt.status).to.equal('0x1');
      const tx = await expectSubmission(receipt.transactionHash, KEYS.cast, RECIPIENTS.cast);
      // cast estimates the tip from eth_feeHistory, whose rewards the ingress reports as 0x0;
      // alloy then offers its floor of 1 wei, never a market tip.
      expect(tx.maxPriorityFeePerGas! <= 1n).to.equal(true);
    });
  });

  // Runs last (mocha runs a suite's own tests before its nested suites): over everything above.
  describe('on the wire, all clients together', () => {
    it('no client sent a batch, and none asked the ingress to sign', () => {
      expect(recorder.exchanges.length).to.be.greaterThan(0);
      const methods = recorder.exchanges.map((x) => {
        expect(x.request.trimStart().startsWith('{'), x.request).to.equal(true);
        return (JSON.parse(x.request) as { method: string }).method;
      });
      expect(methods.filter((m) => /^eth_(sign|sendTransaction)/.test(m))).to.deep.equal([]);
    });
  });
});
