/**
 * A victim's view of the ingress while something else loads it: `eth_chainId` from its own
 * source, one call at a time with 10 ms between calls, on one keep-alive connection, until a
 * deadline. Every answer must be the chain id; the median latency is returned (ms).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

const CHAIN_ID_CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const CHAIN_ID_ANSWER = '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}';

export async function chainIdMedianUntil(url: string, localAddress: string, until: number): Promise<number> {
  const pool = new Pool(url, { connections: 1, localAddress });
  const latencies: number[] = [];
  try {
    for (; Date.now() < until; await sleep(10)) {
      const started = performance.now();
      const answer = await (
        await pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: CHAIN_ID_CALL })
      ).body.text();
      if (answer !== CHAIN_ID_ANSWER) throw new Error(`the victim was answered ${answer}`);
      latencies.push(performance.now() - started);
    }
  } finally {
    await pool.close();
  }
  latencies.sort((a, b) => a - b);
  return latencies[Math.floor(latencies.length / 2)]!;
}
