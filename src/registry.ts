/**
 * The registry: the one place in `src/` that names plugins. Maps YAML keys to modules (explicit
 * imports, no directory scanning) and holds the order rules checked at start and on reload.
 */
import { allowlist } from '../plugins/allowlist.js';
import { auth } from '../plugins/auth.js';
import { batchRefuse } from '../plugins/batch-refuse.js';
import { feeRewrite } from '../plugins/fee-rewrite.js';
import { gate } from '../plugins/gate/index.js';
import { localMethods } from '../plugins/local-methods.js';
import { rateLimit } from '../plugins/rate-limit/index.js';
import { sizeLimit } from '../plugins/size-limit/index.js';
import type { PluginModule } from './plugin.js';

// biome-ignore lint/suspicious/noExplicitAny: one map of modules whose options types differ; each reads its own.
export const PLUGINS: ReadonlyMap<string, PluginModule<any>> = new Map(
  [batchRefuse, sizeLimit, auth, allowlist, rateLimit, gate, feeRewrite, localMethods].map((m) => [m.name, m]),
);

/**
 * The canonical order, and why each stage sits where it does:
 * 1. batch-refuse, size-limit: refuse what the ingress will never carry before spending any
 *    work on it.
 * 2. auth: records who the caller is, so that
 * 3. allowlist can decide on the method knowing it.
 * 4. rate-limit: spends quota only on allowlisted calls, before
 * 5. gate: the expensive path (decoding, signatures, EL state) runs only within quota.
 * 6. fee-rewrite, local-methods: answer allowlisted methods themselves.
 */
export const ORDER_RULES: ReadonlyArray<readonly [before: string, after: string]> = [
  ['batch-refuse', '*'],
  ['size-limit', '*'],
  ['auth', 'allowlist'],
  ['allowlist', 'gate'],
  ['allowlist', 'rate-limit'],
  ['rate-limit', 'gate'],
  ['allowlist', 'local-methods'],
];

/** Why `names` (enabled plugins in list order) breaks an order rule, or undefined if it does not. */
export function orderViolation(names: readonly string[]): string | undefined {
  const early = new Set(ORDER_RULES.filter(([, after]) => after === '*').map(([before]) => before));
  for (const [before, after] of ORDER_RULES) {
    const b = names.indexOf(before);
    if (b < 0) continue;
    const offender =
      after === '*'
        ? names.slice(0, b).find((n) => !early.has(n))
        : names.indexOf(after) >= 0 && names.indexOf(after) < b
          ? after
          : undefined;
    if (offender !== undefined) return `${before} must come before ${offender}`;
  }
  return undefined;
}
