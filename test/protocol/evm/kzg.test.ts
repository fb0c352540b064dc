import { expect } from 'chai';
// The EVM's parameters on the Common, as every simulation has them.
import '../../../protocol/evm/evm-types.js';
import { COMMON } from '../../../protocol/evm/fork.js';
import { loadKzg, pointEvaluationPrecompile } from '../../../protocol/evm/kzg.js';
import { pointEvaluationInput, wrongPointEvaluationInput } from '../../../support/kzg.js';

const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
const hex = (data: Uint8Array | undefined) => `0x${Buffer.from(data ?? []).toString('hex')}`;

describe('gate: KZG point evaluation (0x0a) in simulation', () => {
  const waited: string[] = [];
  const precompile = pointEvaluationPrecompile(async (load) => {
    waited.push('kzg');
    return load;
  });
  const run = (data: string) => precompile.function({ data: bytes(data), gasLimit: 60_000n, common: COMMON } as never);

  it('is the fork precompile at 0x0a, loading the KZG on its first call (the wait not counted as compute)', async () => {
    expect(precompile.address.toString()).to.equal('0x000000000000000000000000000000000000000a');
    const result = await run(pointEvaluationInput());
    expect(waited.length).to.be.at.most(1);
    expect(COMMON.customCrypto.kzg).to.not.equal(undefined);
    // FIELD_ELEMENTS_PER_BLOB (4096) and the BLS modulus, as the EIP specifies.
    expect([result.executionGasUsed, hex(result.returnValue)]).to.deep.equal([
      50_000n,
      `0x${'1000'.padStart(64, '0')}73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001`,
    ]);
    await loadKzg();
  });

  it('fails the call (an EVM error, all its gas) for a proof that does not hold', async () => {
    const result = await run(wrongPointEvaluationInput());
    expect([result.exceptionError?.error, result.executionGasUsed]).to.deep.equal(['kzg proof invalid', 60_000n]);
  });
});
