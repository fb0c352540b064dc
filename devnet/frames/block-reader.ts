/**
 * What the devnet's frame runner reads of anvil: accounts, code and storage at one block, each
 * read once for the block close it serves (the frames' own writes sit above it, in the overlay).
 */
import { type CodeEntry, decodeCode } from '../../protocol/index.js';
import type { StateReader } from '../../protocol/evm/index.js';
import type { Rpc } from '../rpc.js';

export function blockReader(anvil: Rpc, block: bigint): StateReader {
  const tag = `0x${block.toString(16)}`;
  const reads = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let value = reads.get(key) as Promise<T> | undefined;
    if (value === undefined) {
      value = read();
      reads.set(key, value);
    }
    return value;
  };
  return {
    account: (address) =>
      once(`account:${address}`, async () => {
        const [nonce, balance] = await Promise.all([
          anvil('eth_getTransactionCount', [address, tag]),
          anvil('eth_getBalance', [address, tag]),
        ]);
        return { nonce: BigInt(nonce as string), balance: BigInt(balance as string) };
      }),
    code: (address) =>
      once(
        `code:${address}`,
        async (): Promise<CodeEntry> => decodeCode(((await anvil('eth_getCode', [address, tag])) as string).toLowerCase()),
      ),
    storage: (address, slot) =>
      once(`storage:${address}:${slot}`, async () => ((await anvil('eth_getStorageAt', [address, slot, tag])) as string).toLowerCase()),
  };
}
