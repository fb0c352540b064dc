/**
 * The frame tests' suite around the recording submission target of support/submit-target.ts:
 * stock ELs refuse type 0x06, so the gate forwards frames there.
 */
import type { Anvil } from '../../devnet/anvil.js';
import { startSubmitTarget, type SubmitTarget } from '../../support/submit-target.js';
import { useAnvil } from './el.js';
import { PRODUCTION_PLUGINS, startTestIngress, testConfig, type TestIngress } from './ingress.js';

/**
 * For a suite: a real anvil as the execution upstream, a recording submission target, and the
 * production chain in front (the gate judging on every head: head_cache_ms 0; more gate options
 * as YAML lines). The target's record is emptied before each test.
 */
/** `extra`: top-level settings added to the configuration (metrics_listen, say). */
export function useFrameIngress(
  gateOptions = '',
  extra = '',
): { readonly anvil: Anvil; readonly target: SubmitTarget; readonly ingress: TestIngress } {
  const el = useAnvil();
  const suite = {} as { anvil: Anvil; target: SubmitTarget; ingress: TestIngress };
  before(async () => {
    suite.anvil = el.current;
    suite.target = await startSubmitTarget();
    const yaml = testConfig(
      el.current.url,
      PRODUCTION_PLUGINS.replace('  - gate\n', `  - gate:\n      head_cache_ms: 0\n      threads: 1\n${gateOptions}`),
      extra,
    ).replace(`execution: ${el.current.url}`, `execution: ${el.current.url}\n  submit: ${suite.target.url}`);
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
