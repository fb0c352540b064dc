/**
 * A recording submission target (`upstreams.submit`): it accepts every eth_sendRawTransaction,
 * records the raw bytes and answers their hash, as the consensus node does. Stock ELs refuse type
 * 0x06, so frame tests point the gate here to see exactly what it forwarded. Speaks real HTTP.
 */
import { keccak256 } from 'ethers';
import type { Anvil } from '../../devnet/anvil.js';
import { useAnvil } from './el.js';
import { PRODUCTION_PLUGINS, startTestIngress, testConfig, type TestIngress } from './ingress.js';
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

/**
 * For a suite: a real anvil as the execution upstream, a recording submission target, and the
 * production chain in front (the gate judging on every head: head_cache_ms 0). The target's
 * record is emptied before each test.
 */
export function useFrameIngress(): { readonly anvil: Anvil; readonly target: SubmitTarget; readonly ingress: TestIngress } {
  const el = useAnvil();
  const suite = {} as { anvil: Anvil; target: SubmitTarget; ingress: TestIngress };
  before(async () => {
    suite.anvil = el.current;
    suite.target = await startSubmitTarget();
    const yaml = testConfig(el.current.url, PRODUCTION_PLUGINS.replace('  - gate\n', '  - gate:\n      head_cache_ms: 0\n      threads: 1\n')).replace(
      `execution: ${el.current.url}`,
      `execution: ${el.current.url}\n  submit: ${suite.target.url}`,
    );
    suite.ingress = await startTestIngress(yaml);
  });
  after(async () => {
    await suite.ingress?.shutdown();
    await suite.target?.close();
  });
  beforeEach(() => {
    suite.target.received.length = 0;
  });
  return suite;
}
