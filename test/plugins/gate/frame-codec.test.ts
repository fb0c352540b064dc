import { expect } from 'chai';
import { hexlify } from 'ethers';
import { decodeFrameTransaction, type Frame } from '../../../plugins/gate/frame-codec.js';
import { Refusal } from '../../../plugins/gate/refusal.js';

/** frame-transactions.md section 10. */
const V1 = '0x06e70180941111111111111111111111111111111111111111c9c8808080c280808080c0c3808080c0';
const V3 =
  '0x06f89b821fcd80947e5f4552091a69125d5dfcb7b8c2659029395bdfeaca010380c482c350808080de0280940000000000000000000000000000000000001234c482c350800180f848f846018080b841017a3519e066ec20068a5d05b0e66a1e17b29b98ae20535c8241dc09aa3a60f44a06cc4a99b41141d0be281cc1a0573c2c4dad116c7e67d98c3fa38c141c48fea8cb843b9aca00847735940080c0';
const V4 =
  '0x06f8550180941111111111111111111111111111111111111111c9c8808080c280808080eec680808082aabbe68080a0abababababababababababababababababababababababababababababababab82ccddc3808080c0';

export function refusalOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof Refusal) return err.reason;
    throw err;
  }
  return 'accepted';
}

/** A frame with its data as hex, to compare with the vectors. */
const hexData = (frame: Frame) => ({ ...frame, data: hexlify(frame.data) });

describe('gate: frame transaction decoder', () => {
  it('decodes V1 to its fields, with tx hash = sig hash', () => {
    const tx = decodeFrameTransaction(V1);
    expect(tx.chainId).to.equal(1n);
    expect(tx.nonce).to.equal(0n);
    expect(tx.sender).to.equal('0x1111111111111111111111111111111111111111');
    expect(tx.frames.map(hexData)).to.deep.equal([
      { mode: 0, flags: 0, target: undefined, executionGas: 0n, stateGas: 0n, value: 0n, data: '0x' },
    ]);
    expect(tx.signatures).to.deep.equal([]);
    expect([tx.maxPriorityFeePerGas, tx.maxFeePerGas, tx.maxFeePerBlobGas]).to.deep.equal([0n, 0n, 0n]);
    expect(tx.hash).to.equal('0xa795b6de44696d46c096aaa3d6401d6eaa21b9b639408c82be7e9e60358e4387');
    expect(tx.sigHash).to.equal(tx.hash);
  });

  it('decodes V3, the signed transfer on chain 8141', () => {
    const tx = decodeFrameTransaction(V3);
    expect(tx.chainId).to.equal(8141n);
    expect(tx.sender).to.equal('0x7e5f4552091a69125d5dfcb7b8c2659029395bdf');
    expect(tx.frames.map(hexData)).to.deep.equal([
      { mode: 1, flags: 3, target: undefined, executionGas: 50_000n, stateGas: 0n, value: 0n, data: '0x' },
      { mode: 2, flags: 0, target: '0x0000000000000000000000000000000000001234', executionGas: 50_000n, stateGas: 0n, value: 1n, data: '0x' },
    ]);
    expect(tx.signatures).to.have.length(1);
    expect(tx.signatures[0]).to.include({ scheme: 1, signer: undefined, msg: undefined });
    expect(tx.maxPriorityFeePerGas).to.equal(1_000_000_000n);
    expect(tx.maxFeePerGas).to.equal(2_000_000_000n);
    expect(tx.sigHash).to.equal('0xe19cdaf7ba2da89508ddb457d3b3e5a5369e574139b52063bb14e42e66190346');
    expect(tx.hash).to.equal('0x2cafa024dc5d102fd3a2764a6b5f65bfc52e4547ffce235b78229ff711a0de85');
  });

  it('blanks only empty-msg signatures in the signature hash (V4)', () => {
    const tx = decodeFrameTransaction(V4);
    expect(tx.signatures.map((s) => hexlify(s.signature))).to.deep.equal(['0xaabb', '0xccdd']);
    expect(hexlify(tx.signatures[1]!.msg!)).to.equal('0x' + 'ab'.repeat(32));
    expect(tx.hash).to.equal('0xee871bbb2466152f79e357e1cfcbdd71b1587c5b3a9060d9cd91545c1a3a5220');
    expect(tx.sigHash).to.equal('0x85ec4544ddb227c5425add4b606f71ddfc0852100d14066d0061a1b092bad6d3');
  });

  const cases: Array<[string, string, string]> = [
    ['the bare type byte', '0x06', 'rlp-invalid'],
    ['an empty payload list', '0x06c0', 'rlp-invalid'],
    ['a truncated string', '0x06a0', 'rlp-invalid'],
    ['a one-item payload', '0x06c180', 'rlp-invalid'],
    ['a one-byte frame target (V2)', V1.replace('c9c8808080c280808080', 'c9c8808001c280808080'), 'rlp-invalid'],
    ['bytes after the payload', V1 + '00', 'rlp-invalid'],
    // 0x01 wrapped as 0x81 0x01: the chain id is re-framed with a one-byte length prefix.
    ['a single byte wrapped as a string', '0x06e8' + '8101' + V1.slice(8), 'rlp-noncanonical'],
    ['a long-form length under 56 bytes', '0x06f827' + V1.slice(6), 'rlp-noncanonical'],
    ['an integer with a leading zero byte', '0x06e9' + '820001' + V1.slice(8), 'rlp-noncanonical'],
    ['a 19-byte sender', '0x06e601809311111111111111111111111111111111111111c9c8808080c280808080c0c3808080c0', 'rlp-invalid'],
    ['a string where the frame list belongs', '0x06df0180941111111111111111111111111111111111111180c0c3808080c0', 'rlp-invalid'],
    ['flat fees of an older draft', '0x06e30180941111111111111111111111111111111111111111c9c8808080c280808080c08080', 'rlp-invalid'],
    ['a blob network wrapper', '0x06c5c0c0c0c0c0', 'blob-not-supported'],
  ];
  for (const [label, raw, reason] of cases) {
    it(`refuses ${label} with ${reason}`, () => {
      expect(refusalOf(() => decodeFrameTransaction(raw))).to.equal(reason);
    });
  }
});
