/**
 * A recording submission target (`upstreams.submit`): it accepts every eth_sendRawTransaction,
 * records the raw bytes and answers their hash, as the consensus node does. Stock ELs refuse type
 * 0x06, so frame tests point the gate here to see exactly what it forwarded. Speaks real HTTP.
 */
import { keccak256 } from 'ethers';
import { startStubEl } from './stub-el.js';

export interface SubmitTarget {
  readonly url: string;
  /** Raw transactions forwarded to it, in arrival order. */
  readonly received: string[];
  close(): Promise<void>;
}

export async function startSubmitTarget(): Promise<SubmitTarget> {
  const received: string[] = [];
  const stub = await startStubEl({
    eth_sendRawTransaction: (id, params) => {
      const raw = (params as string[])[0]!;
      received.push(raw);
      return JSON.stringify({ jsonrpc: '2.0', id, result: keccak256(raw) });
    },
  });
  return { url: stub.url, received, close: () => stub.close() };
}
