import { expect } from 'chai';
import { evmPatchApplied, frameStateGasPatched } from '../../../protocol/evm/evm-patch.js';

describe('gate: the patched @ethereumjs/evm', () => {
  it('is installed (npm ci applies patches/ through patch-package)', async () => {
    expect(await evmPatchApplied()).to.equal(true);
    expect(frameStateGasPatched()).to.equal(true);
  });
});
