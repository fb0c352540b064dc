/**
 * The fork frames run under: the chain (protocol/chain.ts) at Osaka (EIP-7825's transaction cap, the P256VERIFY
 * precompile at 0x100) plus the EIPs EIP-8141 requires that @ethereumjs/evm implements after it:
 * EIP-7708 (a value transfer logs a Transfer), EIP-2780 (a frame's value to a new account and
 * its delegated target charged at entry) and EIP-8037 (state gas, its charge points as the
 * package has them). The package offers those only at Amsterdam, so this chain's Amsterdam is
 * declared as exactly them: none of Amsterdam's other EIPs (EIP-8038's access repricing,
 * EIP-7928's access lists, EIP-7954's code size) applies here. EIP-7976 and EIP-7981 come along
 * because EIP-8037 requires them; they change transaction intrinsic gas only, which frames
 * compute themselves (frame-checks.ts). One Common for the process: it is read-only here.
 */
import { createCustomCommon, Hardfork, Mainnet, type Common } from '@ethereumjs/common';
import { getActivePrecompiles } from '@ethereumjs/evm';
import { CHAIN } from '../chain.js';
import { ecrecoverPrecompile } from './ecrecover.js';

export const CHAIN_ID = Number(CHAIN.chainId);

export const COMMON: Common = createCustomCommon(
  { chainId: CHAIN_ID, customHardforks: { amsterdam: { eips: [2780, 7708, 7976, 7981, 8037] } } },
  Mainnet,
  {
    hardfork: Hardfork.Amsterdam,
    // ECRECOVER natively (ecrecover.ts); the KZG is given on first use (kzg.ts).
    customCrypto: { ecrecover: ecrecoverPrecompile },
  },
);

/** The precompiles active at the fork, lower-case 0x addresses. */
export const PRECOMPILES: readonly string[] = [...getActivePrecompiles(COMMON).keys()].map((address) => `0x${address}`);
const PRECOMPILE_SET = new Set(PRECOMPILES);

/** Whether `address` (lower-case 0x) is a precompile active at the fork. */
export const isPrecompile = (address: string): boolean => PRECOMPILE_SET.has(address);
