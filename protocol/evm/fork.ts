/**
 * The fork the validation prefix is judged under: chain 8141 at Osaka, the newest fork that
 * @ethereumjs/evm implements whole and the one EIP-8141 builds on (EIP-7825's transaction cap,
 * the P256VERIFY precompile at 0x100). One Common for the process: it is read-only here.
 */
import { createCustomCommon, Hardfork, Mainnet, type Common } from '@ethereumjs/common';
import { getActivePrecompiles } from '@ethereumjs/evm';
import { nativeEcrecover } from './ecrecover.js';

export const CHAIN_ID = 8141;

export const COMMON: Common = createCustomCommon({ chainId: CHAIN_ID }, Mainnet, {
  hardfork: Hardfork.Osaka,
  // EIP-8141 requires EIP-7708: a value transfer to another account logs a Transfer.
  eips: [7708],
  // ECRECOVER natively (ecrecover.ts); the KZG is given on first use (kzg.ts).
  customCrypto: { ecrecover: nativeEcrecover },
});

/** The precompiles active at the fork, lower-case 0x addresses. */
export const PRECOMPILES: readonly string[] = [...getActivePrecompiles(COMMON).keys()].map((address) => `0x${address}`);
const PRECOMPILE_SET = new Set(PRECOMPILES);

/** Whether `address` (lower-case 0x) is a precompile active at the fork. */
export const isPrecompile = (address: string): boolean => PRECOMPILE_SET.has(address);
