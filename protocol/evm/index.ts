/**
 * The EIP-8141 EVM: @ethereumjs/evm at the chain's fork with the frame instructions, one frame
 * runner for the validation prefix (mempool/, with its trace rules) and for full execution, over
 * a state overlay, the opcode wrapping those rules extend it with, and the precompile backends
 * and caches that keep a prefix's cost near its gas. The second door of protocol/
 * (protocol/index.ts is the first, protocol/mempool/index.ts the third).
 */
export { curveBackends } from './curves.js';
export { evmPatchApplied } from './evm-patch.js';
export { estimateFrameGas, FrameEstimateError } from './estimate.js';
export type { FrameGasEstimate } from './estimate.js';
export { budgetChecks, FORK_OPCODES, halt, wrapOpcode } from './evm-types.js';
export type { AddOpcode, RunState } from './evm-types.js';
export { executeFrameTransaction, InvalidFrameTransaction } from './execute.js';
export type { ExecutedFrameTransaction, ExecutionOptions, FrameFailure, SkipReason } from './execute.js';
export { CHAIN_ID, COMMON, PRECOMPILES, isPrecompile } from './fork.js';
export { FrameRunner } from './frame-runner.js';
export type { ExecutionBlock, FrameLog, FrameResult } from './frame-runner.js';
export { installJumpAnalysisCache } from './jump-analysis.js';
export { OverlayStateManager } from './overlay-state.js';
export type { StateReader, StateWrites } from './overlay-state.js';
