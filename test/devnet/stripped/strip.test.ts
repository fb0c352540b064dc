import { expect } from 'chai';
import { id, keccak256, Wallet } from 'ethers';
import { restore, strip } from '../../../devnet/stripped/strip.js';
import { decodeFrameTransaction } from '../../../protocol/index.js';
import { secp256k1Entry, signed } from '../../../support/frames.js';

const wallet = new Wallet(id('strip test key'));
const base = { nonce: 3, to: '0x00000000000000000000000000000000000f2a31', value: 5n, gasLimit: 21_000, data: '0x' };

describe('devnet: signature-stripped records and their witness (stripped/strip.ts)', () => {
  const standard: Array<[string, () => Promise<string>]> = [
    ['legacy without a chain id (pre-EIP-155)', () => wallet.signTransaction({ ...base, type: 0, gasPrice: 7n })],
    ['legacy with EIP-155', () => wallet.signTransaction({ ...base, type: 0, gasPrice: 7n, chainId: 8141 })],
    [
      'EIP-2930',
      () =>
        wallet.signTransaction({
          ...base,
          type: 1,
          gasPrice: 7n,
          chainId: 8141,
          accessList: [{ address: base.to, storageKeys: [id('slot')] }],
        }),
    ],
    ['EIP-1559', () => wallet.signTransaction({ ...base, type: 2, maxFeePerGas: 9n, maxPriorityFeePerGas: 0n, chainId: 8141 })],
  ];
  for (const [label, sign] of standard) {
    it(`${label}: the record is what the sender signed, the witness its 65-byte signature, and they restore the transaction`, async () => {
      const raw = await sign();
      const stripped = strip(raw);
      expect(stripped.witness).to.have.length(1);
      expect(stripped.witness[0]).to.match(/^0x[0-9a-f]{128}(1b|1c)$/);
      expect(stripped.record).to.not.include(stripped.witness[0]!.slice(2, 66));
      expect(restore(stripped)).to.equal(raw);
    });
  }

  it('a frame transaction: the record hashes to the signature hash; only empty-msg entries lose their signature', () => {
    const sender = wallet.address.toLowerCase();
    const raw = signed(
      {
        sender,
        frames: [
          { mode: 1, flags: 3, executionGas: 10_000n },
          { mode: 2, flags: 0, target: base.to, executionGas: 30_000n, value: 1n },
        ],
        signatures: [{ scheme: 1 }, { scheme: 0, msg: id('explicit digest') }, { scheme: 0 }],
      },
      [(digest) => secp256k1Entry(wallet.privateKey, digest), () => '0xaabb', () => '0xccdd'],
    );
    const stripped = strip(raw);
    expect(keccak256(stripped.record)).to.equal(decodeFrameTransaction(raw).sigHash);
    expect(stripped.witness).to.have.length(2);
    expect(stripped.witness[1]).to.equal('0xccdd');
    expect(stripped.record).to.include('aabb');
    expect(restore(stripped)).to.equal(raw);
  });
});
