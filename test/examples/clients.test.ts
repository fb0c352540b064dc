/** The client recipes of docs/clients.md (examples/clients/), run as a newcomer runs them against a devnet. */
import { expect } from 'chai';
import { Wallet, WebSocketProvider } from 'ethers';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createPublicClient, http, webSocket } from 'viem';
import { startDevnet, type Devnet } from '../../devnet/devnet.js';
import { MULTICALL3_ADDRESS } from '../../devnet/multicall3.js';
import { ingressProvider } from '../../examples/chain.js';
import { chain8141 } from '../../examples/clients/viem.js';
import { createLogger } from '../../src/log.js';
import { CAST_BIN, runScript } from '../../support/child.js';
import { call } from '../../support/http.js';
import { DEV_KEYS } from '../../support/keys.js';
import { EMITTED, EMITTER_INIT, topicOf } from '../../support/log-emitter.js';
import { useAnvil } from '../helpers/el.js';
import { OPERATOR_TOKEN, startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const ONE_MILLI_ETH = '0x38d7ea4c68000';
const RECIPIENT = '0x000000000000000000000000000000000000c0DE';

describe('examples/clients: each recipe reads, sends and gets its receipt on the devnet on the first try', function () {
  this.timeout(60_000);
  let devnet: Devnet;
  let url: string;

  before(async () => {
    process.env.SVC_OPERATOR_TOKEN = OPERATOR_TOKEN;
    devnet = await startDevnet({ port: 0, metricsPort: 0, node: { commitIntervalMs: 40, blockIntervalMs: 200 } }, createLogger('error'));
    url = devnet.ingress.url;
  });
  after(() => devnet?.stop());

  it('ethers.ts: batchMaxCount 1, the network given, and a transfer mined', async () => {
    const { code, out } = await runScript('examples/clients/ethers.js', { RPC_URL: url, DEV_KEY: DEV_KEYS[1]! });
    expect(code, out).to.equal(0);
    expect(out).to.match(/^chain 8141, block \d+, 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 holds [\d.]+ ETH\n/);
    expect(out).to.match(/\nreceipt: status 1 in block \d+, gas used 21000\n/);
    const recipient = /recipient (0x[0-9a-fA-F]{40}) holds 0\.001 ETH/.exec(out)?.[1];
    expect(await call(url, 'eth_getBalance', [recipient, 'latest'])).to.equal(ONE_MILLI_ETH);
  });

  it('viem.ts: sendTransactionSync answers with the receipt, and multicall reads through Multicall3', async () => {
    const { code, out } = await runScript('examples/clients/viem.js', { RPC_URL: url, DEV_KEY: DEV_KEYS[2]! });
    expect(code, out).to.equal(0);
    const hash = /\nsent (0x[0-9a-f]{64}): status success in block \d+\n/.exec(out)?.[1];
    expect(hash, out).to.be.a('string');
    expect((await call<{ status: string }>(url, 'eth_getTransactionReceipt', [hash])).status).to.equal('0x1');
    const recipient = /recipient (0x[0-9a-fA-F]{40}) holds 0\.001 ETH/.exec(out)?.[1];
    expect(await call(url, 'eth_getBalance', [recipient, 'latest'])).to.equal(ONE_MILLI_ETH);
  });

  it('cast: chain-id, send --sync (EIP-7966) with its receipt, and a read through Multicall3', async () => {
    const cast = async (...args: string[]) =>
      (await promisify(execFile)(CAST_BIN, [...args, '--rpc-url', url], { timeout: 20_000 })).stdout.trim();
    expect(await cast('chain-id')).to.equal('8141');
    const recipient = '0x000000000000000000000000000000000000c0DE';
    const receipt = JSON.parse(await cast('send', '--sync', '--json', '--private-key', DEV_KEYS[3]!, recipient, '--value', '0.001ether'));
    expect(receipt.status).to.equal('0x1');
    expect(await call(url, 'eth_getTransactionByHash', [receipt.transactionHash])).to.include({ to: recipient.toLowerCase() });
    expect(await cast('call', MULTICALL3_ADDRESS, 'getEthBalance(address)(uint256)', recipient)).to.equal('1000000000000000 [1e15]');
  });

  it('subscribe.ts: viem watchBlocks and ethers on("block") over WebSocket hear of a transfer\'s block', async () => {
    const { code, out } = await runScript('examples/clients/subscribe.js', { RPC_URL: url, DEV_KEY: DEV_KEYS[4]! });
    expect(code, out).to.equal(0);
    const included = [...out.matchAll(/^transfer 0x[0-9a-f]{64} in block (\d+)$/gm)].map(([, n]) => Number(n));
    const viem = Number(/^viem: block (\d+)$/m.exec(out)?.[1]);
    const ethers = Number(/^ethers: block (\d+)$/m.exec(out)?.[1]);
    expect(included, out).to.include.members([viem, ethers]);
  });

  it("logs on the devnet: viem watchEvent and ethers on(filter) over WebSocket hear a contract's event", async () => {
    const wallet = new Wallet(DEV_KEYS[4]!, ingressProvider(url));
    const deployed = await (await wallet.sendTransaction({ data: EMITTER_INIT })).wait();
    const emitter = deployed!.contractAddress!;
    const ws = url.replace('http:', 'ws:');
    const client = createPublicClient({ transport: webSocket(ws) });
    const provider = new WebSocketProvider(ws, 8141);
    try {
      const viemHeard = new Promise<string>((resolve, reject) => {
        const stop = client.watchEvent({
          address: emitter as `0x${string}`,
          onLogs: (logs) => (stop(), resolve(logs[0]!.topics[1]!)),
          onError: reject,
        });
      });
      const ethersHeard = new Promise<string>(
        (resolve) => void provider.on({ address: emitter, topics: [EMITTED] }, (log) => resolve(log.topics[1]!)),
      );
      // Both subscribed once each has its subscription id: sent again until both heard (a devnet block closes per transaction).
      let heard = false;
      const both = Promise.all([viemHeard, ethersHeard]).finally(() => (heard = true));
      for (let n = 1; !heard && n <= 5; n++) {
        await (await wallet.sendTransaction({ to: emitter, data: topicOf(n) })).wait();
        await Promise.race([both, new Promise((resolve) => setTimeout(resolve, 500))]);
      }
      const [viemTopic, ethersTopic] = await both;
      expect(BigInt(viemTopic) >= 1n && BigInt(ethersTopic) >= 1n).to.equal(true);
    } finally {
      await provider.destroy();
      await (await client.transport.getRpcClient()).close();
    }
  });

  it('wscat: the docs/clients.md command subscribes to newHeads and prints the answer, then each head', async () => {
    // docs/clients.md: npx wscat -c ws://127.0.0.1:8545 -x '<eth_subscribe>' -w 30 (stdin open, as a terminal's is).
    const subscribe = '{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}';
    const child = spawn(
      process.execPath,
      ['node_modules/wscat/bin/wscat', '-c', url.replace('http:', 'ws:'), '-x', subscribe, '-w', '30'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    try {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += String(chunk)));
      // Once subscribed, transfers close devnet blocks until one is announced (a feed announces the blocks after its first look).
      const wallet = new Wallet(DEV_KEYS[4]!, ingressProvider(url));
      for (let i = 0; out.split('\n').length < 3; i++) {
        if (i > 100) throw new Error(`no head within 10 s: ${out}`);
        if (out.includes('\n') && i % 5 === 0) await wallet.sendTransaction({ to: RECIPIENT, value: 0n });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const lines = out.split('\n').slice(0, 2);
      const [answer, head] = lines.map(
        (line) => JSON.parse(line) as { result?: string; params?: { subscription: string; result: { number: string } } },
      );
      expect(answer!.result).to.match(/^0x[0-9a-f]{32}$/);
      expect(head!.params!.subscription).to.equal(answer!.result);
      expect(head!.params!.result.number).to.match(/^0x[0-9a-f]+$/);
    } finally {
      child.kill();
    }
  });

  it("indexer.ts: walks every block's logs by range up to the head, as eth_getLogs answers them", async () => {
    const head = BigInt(await call<string>(url, 'eth_blockNumber'));
    const { code, out } = await runScript('examples/clients/indexer.js', { RPC_URL: url, STOP_AT_BLOCK: String(head) });
    expect(code, out).to.equal(0);
    const ranges = [...out.matchAll(/^blocks (\d+)-(\d+): (\d+) logs$/gm)].map(([, first, last]) => [BigInt(first!), BigInt(last!)]);
    expect(ranges[0]![0]).to.equal(0n);
    for (const [i, [first]] of ranges.slice(1).entries()) expect(first).to.equal(ranges[i]![1]! + 1n);
    expect(ranges.at(-1)![1]! >= head).to.equal(true);
  });
});

describe('examples/clients under a rate limit: the recipes wait Retry-After seconds and go on', function () {
  this.timeout(30_000);
  const anvil = useAnvil();
  /** A fresh ingress per test, so that each starts with a full bucket of one read. */
  const withQuotaOfOne = async (use: (url: string) => Promise<void>) => {
    const ingress: TestIngress = await startTestIngress(
      testConfig(anvil.current.url, '\n  - allowlist\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 1, burst: 1}'),
    );
    try {
      await use(ingress.url);
    } finally {
      await ingress.shutdown();
    }
  };

  it("ethers with the recipe's retryFunc: three reads at one a second all answered, about a second apart", () =>
    withQuotaOfOne(async (url) => {
      const provider = ingressProvider(url);
      const started = performance.now();
      // provider.send: getBlockNumber() would answer the second and third from ethers' own cache.
      const read = () => provider.send('eth_blockNumber', []) as Promise<string>;
      const heads = [await read(), await read(), await read()];
      expect(heads.every((head) => /^0x[0-9a-f]+$/.test(head))).to.equal(true);
      // The source's one token a second: the second and third read each waited out a 429.
      expect(performance.now() - started).to.be.at.least(1_800);
      provider.destroy();
    }));

  it("viem's default transport: the same three reads answered", () =>
    withQuotaOfOne(async (url) => {
      const client = createPublicClient({ chain: chain8141(url), transport: http() });
      const started = performance.now();
      const heads = [
        await client.getBlockNumber({ cacheTime: 0 }),
        await client.getBlockNumber({ cacheTime: 0 }),
        await client.getBlockNumber({ cacheTime: 0 }),
      ];
      expect(heads.every((head) => typeof head === 'bigint')).to.equal(true);
      expect(performance.now() - started).to.be.at.least(1_800);
    }));
});
