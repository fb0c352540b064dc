/** The whole devnet (anvil, the node stand-in, the ingress) for a suite, with fast blocks: started in before(), stopped in after(). */
import { startDevnet, type Devnet } from '../../devnet/devnet.js';
import { createLogger } from '../../src/log.js';
import { call } from '../../support/http.js';
import { OPERATOR_TOKEN } from './ingress.js';

export function useDevnet(): { readonly current: Devnet } {
  const holder = {} as { current: Devnet };
  before(async function () {
    this.timeout(30_000);
    process.env.SVC_OPERATOR_TOKEN = OPERATOR_TOKEN;
    holder.current = await startDevnet(
      { port: 0, metricsPort: 0, node: { commitIntervalMs: 40, blockIntervalMs: 200 } },
      createLogger('error'),
    );
  });
  after(async () => {
    await holder.current?.stop();
  });
  return holder;
}

/** Gives `address` 1 ETH on the devnet's anvil. */
export const fund = (devnet: Devnet, address: string) =>
  call(devnet.anvil.url, 'anvil_setBalance', [address, `0x${(10n ** 18n).toString(16)}`]);
