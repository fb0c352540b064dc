/**
 * ethers v6 against the endpoint (docs/clients.md): reads, a transfer, its receipt.
 *
 * Three settings, each for a reason ethers' defaults trip on:
 * - `batchMaxCount: 1`: ethers joins concurrent calls into one JSON array, and the endpoint
 *   takes one request per HTTP call (every call would fail, some with misleading messages);
 * - the network given and `staticNetwork: true`: no eth_chainId probe joined to every first call;
 * - a `retryFunc` that waits `Retry-After` seconds: on HTTP 429 ethers reads the header as
 *   milliseconds and spends its twelve retries within a few milliseconds.
 * All three are in `ingressProvider` (examples/chain.ts), which the other examples use too.
 *
 * Run: `npm run example:ethers` (RPC_URL and DEV_KEY as in examples/chain.ts).
 */
import { Wallet, formatEther } from 'ethers';
import { pathToFileURL } from 'node:url';
import { DEV_KEY, ingressProvider, RPC_URL } from '../chain.js';

async function main(): Promise<void> {
  const provider = ingressProvider(RPC_URL);
  const wallet = new Wallet(DEV_KEY, provider);
  const recipient = Wallet.createRandom().address;
  const [network, head, balance] = await Promise.all([provider.getNetwork(), provider.getBlockNumber(), provider.getBalance(wallet)]);
  console.log(`chain ${network.chainId}, block ${head}, ${wallet.address} holds ${formatEther(balance)} ETH`);
  // The chain is fee-blind: ethers reads a zero priority fee and fills the rest itself.
  const sent = await wallet.sendTransaction({ to: recipient, value: 1_000_000_000_000_000n });
  console.log(`sent ${sent.hash}`);
  const receipt = await sent.wait(1, 60_000);
  console.log(`receipt: status ${receipt?.status} in block ${receipt?.blockNumber}, gas used ${receipt?.gasUsed}`);
  console.log(`recipient ${recipient} holds ${formatEther(await provider.getBalance(recipient))} ETH`);
  provider.destroy();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
