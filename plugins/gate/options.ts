/** The gate's YAML options, with the safe defaults documented in config/ingress.yaml. */
import type { OptionsReader } from '../../src/plugin.js';
import type { AdmissionLimits } from './head/admission.js';
import type { DecodeLimits } from './submission/decode.js';
import { CHAIN, PREFIX_GAS_BUDGET, PREFIX_STATE_GAS_BUDGET } from '../../protocol/index.js';
import { DEFAULT_ESTIMATE_BUDGET_MS, DEFAULT_SIMULATION_BUDGET_MS } from './pool/simulation/budget.js';
import { defaultThreads } from './pool/work-pool.js';

export interface GateOptions extends DecodeLimits, AdmissionLimits {
  readonly role: 'validator' | 'follower';
  readonly relayUrl: string | undefined;
  readonly duplicateWindowMs: number;
  readonly verdictTtlMs: number;
  readonly maxEntries: number;
  readonly headCacheMs: number;
  readonly skipAfterBlocks: bigint;
  /** The EL's validation method, asked after the gate's own judgement; off when undefined. */
  readonly validationMethod: string | undefined;
  /** EIP-7966 eth_sendRawTransactionSync: the default wait for the receipt, and the most a client may ask. */
  readonly syncTimeoutMs: number;
  readonly syncTimeoutMaxMs: number;
  /** Worker threads of each lane (signature entries, prefix simulation), and how many tasks may wait in each, in all and per source. */
  readonly threads: number;
  readonly queueMax: number;
  readonly queuePerSource: number;
  /** Compute milliseconds one validation-prefix simulation may take before it is aborted and refused. */
  readonly simulationBudgetMs: number;
  /** Compute milliseconds one frame transaction's gas estimate (svc_estimateFrameGas) may take, all its runs together. */
  readonly estimateBudgetMs: number;
}

export function parseGateOptions(options: OptionsReader): GateOptions {
  const role = options.string('role', 'validator');
  if (role !== 'validator' && role !== 'follower') options.fail('role', 'must be validator or follower');
  const relayUrl = options.optional('relay_url', () => options.httpUrl('relay_url'));
  if (relayUrl !== undefined && role !== 'follower') options.fail('relay_url', 'applies only to role: follower');
  const parsed: GateOptions = {
    role,
    relayUrl,
    chainId: BigInt(options.integer('chain_id', Number(CHAIN.chainId))),
    blockGasLimit: BigInt(options.integer('block_gas_limit', Number(CHAIN.blockGasLimit))),
    nonceGapMax: BigInt(options.integer('nonce_gap_max', 64, { min: 0 })),
    inFlightCap: options.integer('in_flight_cap', 16),
    frameInFlightCap: options.integer('frame_in_flight_cap', 1),
    contiguousNonces: options.boolean('contiguous_nonces', true),
    skipAfterBlocks: BigInt(options.integer('skip_after_blocks', 1)),
    duplicateWindowMs: options.integer('duplicate_window_ms', 60_000),
    verdictTtlMs: options.integer('verdict_ttl_ms', 30_000),
    maxEntries: options.integer('cache_max_entries', 200_000),
    headCacheMs: options.integer('head_cache_ms', 100, { min: 0, max: 5_000 }),
    validationMethod: options.optionalString('validation_method'),
    syncTimeoutMs: options.integer('sync_timeout_ms', 2_000, { min: 1 }),
    syncTimeoutMaxMs: options.integer('sync_timeout_max_ms', 10_000, { min: 1 }),
    threads: options.integer('threads', defaultThreads(), { min: 1, max: 64 }),
    queueMax: options.integer('queue_max', 256, { min: 1 }),
    queuePerSource: options.integer('queue_per_source', 4, { min: 1 }),
    simulationBudgetMs: options.integer('simulation_budget_ms', DEFAULT_SIMULATION_BUDGET_MS, { min: 1, max: 10_000 }),
    estimateBudgetMs: options.integer('estimate_budget_ms', DEFAULT_ESTIMATE_BUDGET_MS, { min: 1, max: 60_000 }),
    // frame-transactions.md section 6 item 8: configurable, never lower than the reference.
    prefixGasBudget: BigInt(options.integer('prefix_gas_budget', Number(PREFIX_GAS_BUDGET), { min: Number(PREFIX_GAS_BUDGET) })),
    prefixStateGasBudget: BigInt(
      options.integer('prefix_state_gas_budget', Number(PREFIX_STATE_GAS_BUDGET), { min: Number(PREFIX_STATE_GAS_BUDGET) }),
    ),
  };
  if (parsed.syncTimeoutMs > parsed.syncTimeoutMaxMs) {
    options.fail('sync_timeout_ms', `must not exceed sync_timeout_max_ms (${parsed.syncTimeoutMaxMs})`);
  }
  options.done();
  return parsed;
}
