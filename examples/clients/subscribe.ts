/**
 * Subscriptions over WebSocket (docs/clients.md, WebSocket): viem's `webSocket()` transport and ethers'
 * `WebSocketProvider` on the endpoint's own port hear of the block that includes a transfer.
 * Logs are asked for the same way (`client.watchEvent({ address, event, onLogs })`,
 * `provider.on({ address, topics }, listener)`): one `eth_subscribe("logs", filter)` each.
 *
 * A devnet block closes only when a transaction waits, and a subscriber hears of the blocks
 * after it subscribed: the transfer is sent again (at most five times) until both have heard.
 *
 * Run: `npm run example:subscribe` (RPC_URL and DEV_KEY as in examples/chain.ts; ws:// is
 * derived from RPC_URL).
 */
import { pathToFileURL } from 'node:url';
import { WebSocketProvider } from 'ethers';
import { createPublicClient, createWalletClient, http, webSocket, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CHAIN_ID } from '../../client/index.js';
import { DEV_KEY, RPC_URL } from '../chain.js';
import { chain8141 } from './viem.js';

const ATTEMPTS = 5;

async function main(): Promise<void> {
  const chain = chain8141(RPC_URL);
  const url = RPC_URL.replace(/^http/, 'ws');
  const client = createPublicClient({ chain, transport: webSocket(url) });
  const provider = new WebSocketProvider(url, Number(CHAIN_ID));
  const wallet = createWalletClient({ account: privateKeyToAccount(DEV_KEY as Hex), chain, transport: http() });

  const viemHeard = new Promise<bigint>((resolve, reject) => {
    const stop = client.watchBlocks({ onBlock: (block) => (stop(), resolve(block.number)), onError: reject });
  });
  // on(), not once(): once() unsubscribes by itself as the block arrives, and destroying the
  // provider before that request is answered rejects it where nothing can catch it (ethers 6);
  // a listener still there at destroy() is stopped without a request.
  const ethersHeard = new Promise<number>((resolve) => void provider.on('block', resolve));
  let heard = false;
  const both = Promise.all([viemHeard, ethersHeard]).finally(() => (heard = true));
  for (let attempt = 1; !heard && attempt <= ATTEMPTS; attempt++) {
    const receipt = await wallet.sendTransactionSync({ to: wallet.account.address, value: 0n });
    console.log(`transfer ${receipt.transactionHash} in block ${receipt.blockNumber}`);
    await Promise.race([both, new Promise((resolve) => setTimeout(resolve, 500))]);
  }
  const [viemBlock, ethersBlock] = await Promise.race([
    both,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no block heard of')), 1_000)),
  ]);
  console.log(`viem: block ${viemBlock}`);
  console.log(`ethers: block ${ethersBlock}`);
  await provider.destroy();
  await (await client.transport.getRpcClient()).close();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
