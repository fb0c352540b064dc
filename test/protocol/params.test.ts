import { expect } from 'chai';
import { PARAMS_BY_EIP, paramsOf } from '../../protocol/params.js';

describe('protocol: params, by the EIP that sets them', () => {
  it("gives EIP-2929's access costs, EIP-3860's and EIP-7825's caps and EIP-8141's expiry verifier", () => {
    expect(paramsOf([2929, 3860, 7825, 8141])).to.deep.equal({
      coldAccountAccessGas: 2_600n,
      warmAccountAccessGas: 100n,
      maxInitCodeBytes: 49_152,
      transactionGasCap: 16_777_216n,
      expiryVerifier: '0x0000000000000000000000000000000000008141',
      expiryVerifierCode: '0x60083614600a575f5ffd5b5f3560c01c4211601657005b5f5ffd',
      expiryVerifierGas: 51n,
    });
  });

  it("takes a later EIP's value over an earlier one's: EIP-8038 raises cold access to 3,000, warm access stays", () => {
    expect(paramsOf([2929, 3860, 7825, 8038, 8141])).to.include({ coldAccountAccessGas: 3_000n, warmAccountAccessGas: 100n });
    expect(paramsOf([8038, 2929, 3860, 7825, 8141])).to.include({ coldAccountAccessGas: 2_600n });
  });

  it('refuses a list that leaves a parameter unset, naming it', () => {
    expect(() => paramsOf([3860, 7825, 8141])).to.throw('no EIP of 3860, 7825, 8141 sets coldAccountAccessGas, warmAccountAccessGas');
    expect(() => paramsOf([2929, 3860, 7825])).to.throw(
      'no EIP of 2929, 3860, 7825 sets expiryVerifier, expiryVerifierCode, expiryVerifierGas',
    );
    expect(() => paramsOf([2929, 8141])).to.throw('no EIP of 2929, 8141 sets maxInitCodeBytes, transactionGasCap');
  });

  it('refuses an EIP it knows no parameter of', () => {
    expect(() => paramsOf([2929, 3860, 1559, 8141])).to.throw('EIP-1559 sets no parameter known here');
  });

  it('keeps addresses and code in lower-case hex, as the rules compare them', () => {
    for (const set of Object.values(PARAMS_BY_EIP))
      for (const value of Object.values(set)) if (typeof value === 'string') expect(value).to.equal(value.toLowerCase());
  });
});
