/**
 * What both examples do against the endpoint: connect with ethers (one call per request: the
 * endpoint refuses batches), fund an address from a development key and wait until the
 * funding is mined (an account's first frame transaction is judged against mined state), read
 * fees, and print a frame transaction's receipt.
 */
import { FetchRequest, JsonRpcProvider, Network, Wallet } from 'ethers';
import type { FrameTransactionReceipt } from '../client/ethers.js';
import { CHAIN_ID } from '../client/index.js';

/** npm start's endpoint; RPC_URL for another. */
export const RPC_URL = process.env.RPC_URL ?? 'http://127.0.0.1:8545';
/** anvil's first well-known development key, funded on the devnet; DEV_KEY for another. */
export const DEV_KEY = process.env.DEV_KEY ?? '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const RECEIPT_TIMEOUT_MS = 60_000;

/**
 * An ethers provider that works with the endpoint on the first try (docs/clients.md "Pointing clients at
 * it"): one call per HTTP request (`batchMaxCount: 1`), the network given (no eth_chainId probe
 * joined to each first call), and on HTTP 429 a wait of `Retry-After` seconds (ethers reads the
 * header as milliseconds and spends its twelve retries at once).
 */
export function ingressProvider(url: string, pollingInterval = 1_000): JsonRpcProvider {
  const connection = new FetchRequest(url);
  connection.retryFunc = async (_request, response) => {
    const seconds = Number(response.headers['retry-after'] ?? '1');
    await new Promise((resolve) => setTimeout(resolve, 1_000 * (Number.isFinite(seconds) ? seconds : 1)));
    return true;
  };
  return new JsonRpcProvider(connection, Network.from(Number(CHAIN_ID)), { batchMaxCount: 1, staticNetwork: true, pollingInterval });
}

export function connect(): { provider: JsonRpcProvider; dev: Wallet } {
  const provider = ingressProvider(RPC_URL, 250);
  return { provider, dev: new Wallet(DEV_KEY, provider) };
}

/** Sends `value` from the development key to `to` and waits for its receipt. */
export async function fund(dev: Wallet, to: string, value: bigint): Promise<void> {
  const tx = await dev.sendTransaction({ to, value });
  const receipt = await tx.wait(1, RECEIPT_TIMEOUT_MS);
  if (receipt?.status !== 1) throw new Error(`funding ${to} failed`);
}

/** The chain is fee-blind: no tip; a max fee of twice the base fee rides out a rising block or two. */
export async function fees(provider: JsonRpcProvider): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
  const block = await provider.getBlock('latest');
  return { maxFeePerGas: 2n * (block?.baseFeePerGas ?? 1_000_000_000n), maxPriorityFeePerGas: 0n };
}

/** How long an example waits for its receipt. */
export const RECEIPT_WAIT = { timeoutMs: RECEIPT_TIMEOUT_MS, pollMs: 250 };

/** The receipt in a few lines. */
export function describe(receipt: FrameTransactionReceipt): string {
  const frames = receipt.frameReceipts.map(
    (f, i) => `    frame ${i}: status ${f.status === 'success' ? 1 : 0}, execution gas ${f.executionGasUsed}, state gas ${f.stateGasUsed}`,
  );
  return [
    `  status ${receipt.status === 'success' ? 1 : 0} in block ${receipt.blockNumber}`,
    `  payer ${receipt.payer}`,
    `  gas used ${receipt.gasUsed} at ${receipt.effectiveGasPrice} wei per gas`,
    ...frames,
  ].join('\n');
}
