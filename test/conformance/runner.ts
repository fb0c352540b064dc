/**
 * The devnet's frame runner as the execution suites use it: anvil (no automine) with the
 * FrameChain that runs frame transactions when a block closes; `run` closes a block holding one
 * transaction and answers what the runner executed (per-frame receipts, payer, gas used).
 */
import { expect } from 'chai';
import { FrameChain } from '../../devnet/frames/frame-chain.js';
import type { ExecutedFrameTransaction } from '../../protocol/evm/index.js';
import { rpcClient, type Rpc } from '../../devnet/rpc.js';
import { decodeFrameTransaction } from '../../protocol/index.js';
import { useAnvil } from '../helpers/el.js';

export interface Runner {
  readonly el: Rpc;
  /** Closes a block holding `raw`; it must be included. */
  run(raw: string): Promise<ExecutedFrameTransaction>;
  /** Closes a block holding `raw`: why it was left out, or undefined if it was included. */
  leftOut(raw: string): Promise<string | undefined>;
  balance(address: string): Promise<bigint>;
  nonce(address: string): Promise<bigint>;
  slot(address: string, slot: number): Promise<bigint>;
  /** `code` at a fresh address. */
  contract(code: string): Promise<string>;
}

export function useRunner(): Runner {
  const anvil = useAnvil({ extraArgs: ['--no-mining'] });
  let chain: FrameChain;
  let el: Rpc;
  let contracts = 0;
  before(() => {
    el = rpcClient(anvil.current.url);
    chain = new FrameChain(anvil.current.url);
  });
  return {
    get el() {
      return el;
    },
    async run(raw) {
      await el('evm_mine');
      expect(await chain.closeBlock([raw])).to.deep.equal([]);
      return chain.record(decodeFrameTransaction(raw).hash)!.executed;
    },
    async leftOut(raw) {
      await el('evm_mine');
      return (await chain.closeBlock([raw]))[0]?.why;
    },
    balance: async (address) => BigInt(await el('eth_getBalance', [address, 'latest'])),
    nonce: async (address) => BigInt(await el('eth_getTransactionCount', [address, 'latest'])),
    slot: async (address, slot) => BigInt(await el('eth_getStorageAt', [address, `0x${slot.toString(16)}`, 'latest'])),
    async contract(code) {
      const address = `0x${(0x5e0000n + BigInt(contracts++)).toString(16).padStart(40, '0')}`;
      await el('anvil_setCode', [address, code]);
      return address;
    },
  };
}
