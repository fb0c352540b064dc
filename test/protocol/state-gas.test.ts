import { expect } from 'chai';
import { NEW_ACCOUNT_STATE_GAS } from '../../protocol/index.js';
import { COST_PER_STATE_BYTE, STATE_BYTES_PER_NEW_ACCOUNT } from '../../protocol/state-gas.js';

describe('state gas (EIP-8037 as pinned)', () => {
  it('prices a new account at 120 bytes of 1,530: 183,600, the pin table values', () => {
    expect(COST_PER_STATE_BYTE).to.equal(1_530n);
    expect(STATE_BYTES_PER_NEW_ACCOUNT).to.equal(120n);
    expect(NEW_ACCOUNT_STATE_GAS).to.equal(183_600n);
  });
});
