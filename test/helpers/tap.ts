/**
 * A recording tap between the ingress and a real EL: forwards every POST body unchanged to the
 * EL and keeps a copy, so tests can prove what the EL saw (and what it never saw).
 */
import type { Anvil } from '../../devnet/anvil.js';
import { startStubEl } from '../../support/stub-el.js';
import { useAnvil } from './el.js';
import { startTestIngress, testConfig, type TestIngress } from './ingress.js';

export interface Tap {
  readonly url: string;
  /** Bodies received, in arrival order. */
  readonly bodies: string[];
  methods(): string[];
  close(): Promise<void>;
}

/** The stub with no answers of its own: everything falls through to `targetUrl`. */
export async function startTap(targetUrl: string): Promise<Tap> {
  const stub = await startStubEl({}, { fallthrough: targetUrl });
  return {
    url: stub.url,
    bodies: stub.bodies,
    methods: () => stub.bodies.map((b) => (JSON.parse(b) as { method: string }).method),
    close: () => stub.close(),
  };
}

/**
 * For a suite: a real anvil, a tap in front of it, and the production ingress in front of the
 * tap (`plugins` replaces the chain). The tap is emptied before each test.
 */
export function useTappedIngress(plugins?: string): { readonly anvil: Anvil; readonly tap: Tap; readonly ingress: TestIngress } {
  const el = useAnvil();
  const suite = {} as { anvil: Anvil; tap: Tap; ingress: TestIngress };
  before(async () => {
    suite.anvil = el.current;
    suite.tap = await startTap(el.current.url);
    suite.ingress = await startTestIngress(testConfig(suite.tap.url, plugins));
  });
  after(async () => {
    await suite.ingress?.shutdown();
    await suite.tap?.close();
  });
  beforeEach(() => {
    suite.tap.bodies.length = 0;
  });
  return suite;
}
