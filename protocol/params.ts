/**
 * The chain's protocol parameters by the EIP that sets them, as @ethereumjs keeps its `params`:
 * a chain names the EIPs it runs (chain.ts), in activation order, and where two set one value
 * the later one's stands. What frames charge outside the EVM reads them here (the access cost of
 * a frame's target at entry, the expiry verifier's place and code, the caps on a transaction's
 * gas and init code); the EVM's own opcode costs
 * are @ethereumjs's for the fork (protocol/evm/fork.ts).
 */
export interface Params {
  /** Gas for the first touch of an account in a transaction. */
  readonly coldAccountAccessGas: bigint;
  /** Gas for touching an account already touched. */
  readonly warmAccountAccessGas: bigint;
  /** Where the canonical expiry verifier lives (lower-case 0x address). */
  readonly expiryVerifier: string;
  /** The runtime code installed there at activation (lower-case hex). */
  readonly expiryVerifierCode: string;
  /** What the verifier's execution costs on its passing path (its 15 instructions). */
  readonly expiryVerifierGas: bigint;
  /** Most init code a creation may carry, in bytes. */
  readonly maxInitCodeBytes: number;
  /** Most gas one transaction may use (its execution gas, for a frame transaction). */
  readonly transactionGasCap: bigint;
}

export const PARAMS_BY_EIP: Readonly<Record<number, Partial<Params>>> = {
  2929: { coldAccountAccessGas: 2_600n, warmAccountAccessGas: 100n },
  3860: { maxInitCodeBytes: 49_152 },
  7825: { transactionGasCap: 16_777_216n },
  // State-access repricing (Amsterdam on Ethereum); not on chain 8141 (chain.ts).
  8038: { coldAccountAccessGas: 3_000n },
  8141: {
    expiryVerifier: '0x0000000000000000000000000000000000008141',
    expiryVerifierCode: '0x60083614600a575f5ffd5b5f3560c01c4211601657005b5f5ffd',
    expiryVerifierGas: 51n,
  },
};

/** The parameters of a chain running `eips` in this order; every parameter must be set by one of them. */
export function paramsOf(eips: readonly number[]): Params {
  const merged: Partial<Params> = {};
  for (const eip of eips) {
    const set = PARAMS_BY_EIP[eip];
    if (set === undefined) throw new Error(`EIP-${eip} sets no parameter known here`);
    Object.assign(merged, set);
  }
  const missing = (
    [
      'coldAccountAccessGas',
      'warmAccountAccessGas',
      'expiryVerifier',
      'expiryVerifierCode',
      'expiryVerifierGas',
      'maxInitCodeBytes',
      'transactionGasCap',
    ] as const
  ).filter((name) => merged[name] === undefined);
  if (missing.length > 0) throw new Error(`no EIP of ${eips.join(', ')} sets ${missing.join(', ')}`);
  return merged as Params;
}
