/**
 * viem against the endpoint (docs/clients.md): reads, Multicall3, and a transfer
 * sent with eth_sendRawTransactionSync (EIP-7966), which answers with its receipt.
 *
 * viem's defaults fit: its HTTP transport does not batch unless asked (leave `batch` off) and
 * waits `Retry-After` seconds on HTTP 429. The chain names Multicall3's canonical address, where
 * the devnet (and chain 8141's genesis) carries it, so `multicall` works.
 *
 * Run: `npm run example:viem` (RPC_URL and DEV_KEY as in examples/chain.ts).
 */
import { pathToFileURL } from 'node:url';
import { createPublicClient, createWalletClient, defineChain, formatEther, http, multicall3Abi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { CHAIN_ID } from '../../client/index.js';
import { DEV_KEY, RPC_URL } from '../chain.js';

export const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

export const chain8141 = (url: string) =>
  defineChain({
    id: Number(CHAIN_ID),
    name: `chain ${CHAIN_ID}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
    contracts: { multicall3: { address: MULTICALL3 } },
  });

async function main(): Promise<void> {
  const chain = chain8141(RPC_URL);
  const client = createPublicClient({ chain, transport: http() });
  const account = privateKeyToAccount(DEV_KEY as Hex);
  const wallet = createWalletClient({ account, chain, transport: http() });
  const recipient = privateKeyToAccount(generatePrivateKey()).address;

  console.log(`chain ${await client.getChainId()}, block ${await client.getBlockNumber()}`);
  const receipt = await wallet.sendTransactionSync({ to: recipient, value: 1_000_000_000_000_000n });
  console.log(`sent ${receipt.transactionHash}: status ${receipt.status} in block ${receipt.blockNumber}`);
  // One eth_call through Multicall3 reads both balances at one block.
  const balanceOf = (address: Hex) =>
    ({ address: MULTICALL3, abi: multicall3Abi, functionName: 'getEthBalance', args: [address] }) as const;
  const [sender, received] = await client.multicall({ allowFailure: false, contracts: [balanceOf(account.address), balanceOf(recipient)] });
  console.log(`multicall: sender holds ${formatEther(sender)} ETH, recipient ${recipient} holds ${formatEther(received)} ETH`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
