/**
 * The chain, in one place: its id, block gas limit and the EIPs whose parameters it runs
 * (params.ts). The gate's defaults, the frame rules, the EVM's fork and the devnet read it here; a
 * chain that adopts another EIP's values (EIP-8038's cold access, an expiry verifier elsewhere)
 * changes this list, not the code that uses them.
 */
import { paramsOf, type Params } from './params.js';

export interface ChainConfig extends Params {
  readonly chainId: bigint;
  readonly blockGasLimit: bigint;
  /** The EIPs whose parameters apply, in activation order. */
  readonly eips: readonly number[];
}

export function chainConfig(chainId: bigint, blockGasLimit: bigint, eips: readonly number[]): ChainConfig {
  return { chainId, blockGasLimit, eips, ...paramsOf(eips) };
}

/**
 * Chain 8141 (service-spec section 1): 60,000,000 gas a block, EIP-2929's access costs, EIP-3860's
 * init-code cap and EIP-7825's transaction gas cap (Osaka).
 */
export const CHAIN: ChainConfig = chainConfig(8141n, 60_000_000n, [2929, 3860, 7825, 8141]);
