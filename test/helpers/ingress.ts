/** A real ingress in this process, in front of a given EL, from YAML as an operator writes it. */
import { parseConfig, type IngressConfig } from '../../src/config/load.js';
import { startIngress, type Ingress } from '../../src/ingress.js';
import { createLogger } from '../../src/log.js';

export const OPERATOR_TOKEN = 'test-operator-token-0123456789abcdef';
process.env.SVC_TEST_OPERATOR_TOKEN = OPERATOR_TOKEN;

/**
 * The shipped production chain, with the token from the environment, and guessing throttled
 * less (suites send many wrong tokens from one peer on purpose; auth.test.ts tests the throttle).
 */
export const PRODUCTION_PLUGINS = `
  - batch-refuse
  - size-limit
  - auth:
      token_env: SVC_TEST_OPERATOR_TOKEN
      guesses_per_minute: 10000
  - allowlist
  - gate
  - fee-rewrite
`;

export interface TestIngress extends Ingress {
  /** Every log line written so far. */
  readonly logs: string[];
  readonly config: IngressConfig;
}

/**
 * A test's configuration. The read cache is off unless `extra` sets `cache:`: most tests count
 * what reaches the EL, and a kept answer never does (test/src/cache/ tests the cache).
 */
export function testConfig(executionUrl: string, plugins = PRODUCTION_PLUGINS, extra = ''): string {
  const cache = /^cache:/m.test(extra) ? '' : 'cache: {max_bytes: 0}';
  return `listen: 127.0.0.1:0
${cache}
upstreams:
  execution: ${executionUrl}
  headers_timeout_ms: 2000
  body_timeout_ms: 2000
log_level: debug
${extra}
plugins:${plugins}`;
}

export async function startTestIngress(yaml: string): Promise<TestIngress> {
  const config = parseConfig(yaml);
  const logs: string[] = [];
  const ingress = await startIngress(
    config,
    createLogger(config.logLevel, (line) => logs.push(line)),
  );
  return { ...ingress, logs, config };
}
