/**
 * The pairing-curve precompiles of the embedded EVM on WASM libraries, for what they cost: with
 * @ethereumjs/evm's default pure-JS backends (@noble/curves) a 100,000-gas VERIFY prefix of
 * BN254 multiplications took ~60 ms of pool time, BLS12-381 G2 MSMs ~51 ms, field-to-curve
 * maps ~50 ms: past the 50 ms a prefix may cost (BENCHMARKS.md "Simulation cost",
 * docs/decisions/0013-wasm-curves-for-precompiles.md).
 *
 * - BLS12-381 (0x0b-0x11, EIP-2537): the package's `MCLBLS` over mcl-wasm (herumi's mcl), its
 *   documented alternative backend; additions without the subgroup check, as the EIP asks.
 * - BN254 (0x06-0x08): multiplication and pairing on the package's `RustBN254` over rustbn-wasm
 *   (the ethereumjs WASM build of Parity's bn); addition stays on `NobleBN254`, faster there.
 *
 * Both libraries are loaded and started on first use, once per thread (`curveBackends`): a
 * thread or process that never simulates never compiles their WASM.
 */
import { type EVMBLSInterface, type EVMBN254Interface, MCLBLS, NobleBN254, RustBN254 } from '@ethereumjs/evm';

export interface CurveBackends {
  readonly bls: EVMBLSInterface;
  readonly bn254: EVMBN254Interface;
}

class Bn254 implements EVMBN254Interface {
  constructor(
    private readonly noble: NobleBN254,
    private readonly rust: RustBN254,
  ) {}

  add(input: Uint8Array): Uint8Array {
    return this.noble.add(input);
  }

  mul(input: Uint8Array): Uint8Array {
    return this.rust.mul(input);
  }

  pairing(input: Uint8Array): Uint8Array {
    return this.rust.pairing(input);
  }
}

let backends: Promise<CurveBackends> | undefined;

/** The thread's backends, started on first use. */
export function curveBackends(): Promise<CurveBackends> {
  backends ??= (async () => {
    const [mcl, { initRustBN }] = await Promise.all([import('mcl-wasm'), import('rustbn-wasm')]);
    const [, rust] = await Promise.all([mcl.init(mcl.BLS12_381), initRustBN()]);
    const bls = new MCLBLS(mcl);
    // The EVM calls init() itself; once here makes the backend whole for any other caller.
    bls.init();
    return { bls, bn254: new Bn254(new NobleBN254(), new RustBN254(rust)) };
  })();
  return backends;
}
