/**
 * The public mempool's side of a frame transaction, run in the EIP-8141 EVM: its validation
 * prefix under the trace rules (validate-prefix.ts, trace-rules.ts). The third door of protocol/,
 * loaded only where prefixes are simulated; the mempool's EVM-free rules (prefix shapes and
 * budgets, policy.ts) go through protocol/index.ts.
 */
export { validatePrefix } from './validate-prefix.js';
export type { PrefixProgress, PrefixRun } from './validate-prefix.js';
