import { expect } from 'chai';
import { InvalidFrameRequest, isFrameRequest, readFrameRequest } from '../../protocol/frame-request.js';

const SENDER = '0x00000000000000000000000000000000000e5703';
const read = (request: object) => readFrameRequest(request, 8141n);
const refusal = (request: object) => {
  try {
    read(request);
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidFrameRequest);
    return (err as Error).message;
  }
  throw new Error('read');
};

describe('protocol/frame-request: a frame transaction as an estimate request names it', () => {
  it('marks the limits left out, and completes the rest: nonce, fees and signatures', () => {
    const { tx, unknown, nonceGiven } = read({
      from: SENDER,
      frames: [
        { mode: '0x1', flags: '0x3' },
        { mode: '0x2', target: '0x00000000000000000000000000000000000000AA', executionGas: '0x7530', value: '0x5', data: '0x2a' },
      ],
      signatures: [{ scheme: '0x65' }, { scheme: '0x1', signer: '0x', signature: `0x${'22'.repeat(65)}` }, { scheme: '0x0' }],
    });
    expect(unknown).to.deep.equal([
      { executionGas: true, stateGas: true },
      { executionGas: false, stateGas: true },
    ]);
    expect(nonceGiven).to.equal(false);
    expect([tx.nonce, tx.maxFeePerGas, tx.maxPriorityFeePerGas, tx.chainId]).to.deep.equal([0n, 0n, 0n, 8141n]);
    expect(tx.frames[1]).to.deep.include({
      mode: 2,
      flags: 0,
      target: '0x00000000000000000000000000000000000000aa',
      executionGas: 30_000n,
      value: 5n,
    });
    // A stand-in of the scheme's full length in non-zero bytes: the calldata cost at its most.
    expect(tx.signatures.map((s) => [s.signature.length, s.signature.every((b) => b === 1)])).to.deep.equal([
      [5_261, true],
      [65, false],
      [0, true],
    ]);
  });

  it('reads sender as from, and a given nonce and fees', () => {
    const { tx, nonceGiven } = read({ sender: SENDER, nonce: '0x3', maxFeePerGas: '0x10', frames: [{ mode: '0x1', flags: '0x3' }] });
    expect([tx.sender, tx.nonce, tx.maxFeePerGas, nonceGiven]).to.deep.equal([SENDER, 3n, 16n, true]);
  });

  it('refuses what is not a frame transaction, saying which field', () => {
    expect(refusal({ frames: [{ mode: '0x1' }] })).to.equal('from (the sender) must be a 20-byte address');
    expect(refusal({ from: SENDER, frames: [] })).to.equal('frames must be a list of 1 to 64 frames');
    expect(refusal({ from: SENDER, frames: [{ mode: '0x3' }] })).to.equal('frames[0].mode must be 0x0, 0x1 or 0x2');
    expect(refusal({ from: SENDER, frames: [{ mode: 1 }] })).to.equal('frames[0].mode must be a hex quantity (0x…)');
    expect(refusal({ from: SENDER, frames: [{ mode: '0x1', executionGas: '0x010' }] })).to.equal(
      'frames[0].executionGas must be a hex quantity (0x…)',
    );
    expect(refusal({ from: SENDER, chainId: '0x1', frames: [{ mode: '0x1' }] })).to.equal('chainId must be 0x1fcd');
    expect(refusal({ from: SENDER, type: '0x2', frames: [{ mode: '0x1' }] })).to.equal('type must be 0x6 (a frame transaction)');
    expect(refusal({ from: SENDER, frames: [{ mode: '0x1' }], signatures: [{ scheme: '0x3' }] })).to.equal(
      'signatures[0].scheme 0x3 is not a scheme of this chain',
    );
    expect(refusal({ from: SENDER, maxFeePerBlobGas: '0x1', frames: [{ mode: '0x1' }] })).to.equal(
      'maxFeePerBlobGas must be 0: the chain carries no blobs',
    );
  });

  it('tells a frame transaction among eth_estimateGas calls: type 0x6, or frames named', () => {
    expect([{ type: '0x6' }, { type: '0x06' }, { frames: [] }].map(isFrameRequest)).to.deep.equal([true, true, true]);
    expect([{ type: '0x2' }, { to: SENDER }, null, [], 'x'].map(isFrameRequest)).to.deep.equal([false, false, false, false, false]);
  });
});
