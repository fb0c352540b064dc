import { expect } from 'chai';
import { NEW_ACCOUNT_STATE_GAS } from '../../../protocol/index.js';
import { CHAIN_ID, COMMON, isPrecompile, PRECOMPILES } from '../../../protocol/evm/index.js';
import { CHAIN } from '../../../protocol/index.js';

describe('the fork frames run under', () => {
  it("is Osaka with EIP-8141's required EIP-7708, EIP-2780 and EIP-8037, none of Amsterdam's other EIPs", () => {
    expect(COMMON.chainId()).to.equal(BigInt(CHAIN_ID));
    for (const eip of [7702, 7825, 7708, 2780, 8037]) expect(COMMON.isActivatedEIP(eip), `EIP-${eip}`).to.equal(true);
    for (const eip of [8038, 7928, 7954, 7904]) expect(COMMON.isActivatedEIP(eip), `EIP-${eip}`).to.equal(false);
  });

  it('prices state and access as the pin does: CPSB 1,530, 120 bytes an account, 64 a slot, cold access 2,600', () => {
    expect(COMMON.param('costPerStateByte')).to.equal(1_530n);
    expect(COMMON.param('stateBytesPerNewAccount') * COMMON.param('costPerStateByte')).to.equal(NEW_ACCOUNT_STATE_GAS);
    expect(COMMON.param('stateBytesPerStorageSet')).to.equal(64n);
    expect(COMMON.param('coldaccountaccessGas')).to.equal(CHAIN.coldAccountAccessGas);
  });

  it('has the precompiles of Osaka, P256VERIFY at 0x100 the last', () => {
    expect(PRECOMPILES).to.have.length(18);
    expect(PRECOMPILES.at(-1)).to.equal('0x0000000000000000000000000000000000000100');
    expect(isPrecompile('0x0000000000000000000000000000000000000001')).to.equal(true);
    expect(isPrecompile('0x0000000000000000000000000000000000000012')).to.equal(false);
  });
});
