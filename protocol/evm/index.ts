/**
 * The EIP-8141 EVM: @ethereumjs/evm at the chain's fork with the frame instructions, the
 * validation-prefix trace rules, and the precompile backends and caches that keep a prefix's
 * cost near its gas. The second door of protocol/ (protocol/index.ts is the first).
 */
export { curveBackends } from './curves.js';
export { evmPatchApplied } from './evm-patch.js';
export { CHAIN_ID, COMMON, PRECOMPILES, isPrecompile } from './fork.js';
export { frameOpcodes, journalApprovals } from './frame-opcodes.js';
export type { CompletedFrame, FrameContext } from './frame-opcodes.js';
export { installJumpAnalysisCache } from './jump-analysis.js';
export { pointEvaluationPrecompile } from './kzg.js';
export { validationRules } from './validation-rules.js';
export type { RuleContext } from './validation-rules.js';
