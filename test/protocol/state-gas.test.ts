import { expect } from 'chai';
import { deployStateGas, NEW_ACCOUNT_STATE_GAS } from '../../protocol/index.js';

describe('protocol: EIP-8037 state gas of what a deploy frame creates', () => {
  it('prices a new account at 120 bytes, code at its length, each new slot at 64 bytes, 1,530 gas a byte', () => {
    expect(deployStateGas({ created: true, codeBytes: 0, newSlots: 0 })).to.equal(183_600n);
    expect(deployStateGas({ created: true, codeBytes: 0, newSlots: 0 })).to.equal(NEW_ACCOUNT_STATE_GAS);
    expect(deployStateGas({ created: false, codeBytes: 24_576, newSlots: 0 })).to.equal(24_576n * 1_530n);
    expect(deployStateGas({ created: true, codeBytes: 10, newSlots: 2 })).to.equal((120n + 10n + 128n) * 1_530n);
    expect(deployStateGas({ created: false, codeBytes: 0, newSlots: 0 })).to.equal(0n);
  });
});
