import { expect } from 'chai';
import { TxEnvelopeEip8141 } from 'ox';
import {
  decodeFrameTransaction,
  encodeFrameTransaction,
  type FrameTransaction,
  frameSignatureHash,
  frameTransactionHash,
} from '../../client/index.js';
import { encodeFrameTx, frameSigHash } from '../../support/frames.js';

/** frame-transactions.md section 10: V3 (SECP256K1, two frames) and V4 (an explicit msg). */
const V3 =
  '0x06f89b821fcd80947e5f4552091a69125d5dfcb7b8c2659029395bdfeaca010380c482c350808080de0280940000000000000000000000000000000000001234c482c350800180f848f846018080b841017a3519e066ec20068a5d05b0e66a1e17b29b98ae20535c8241dc09aa3a60f44a06cc4a99b41141d0be281cc1a0573c2c4dad116c7e67d98c3fa38c141c48fea8cb843b9aca00847735940080c0';
const V4 =
  '0x06f8550180941111111111111111111111111111111111111111c9c8808080c280808080eec680808082aabbe68080a0abababababababababababababababababababababababababababababababab82ccddc3808080c0';

const TRANSFER: FrameTransaction = {
  from: '0x5EAF00000000000000000000000000000000a126',
  nonce: 2n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1n,
  frames: [
    { mode: 1, flags: 3, executionGas: 100n },
    { mode: 2, target: '0x00000000000000000000000000000000000C1E77', executionGas: 2_600n, stateGas: 183_600n, value: 5n, data: '0x2a' },
  ],
  signatures: [{ scheme: 0x65 }, { scheme: 0x01, signer: '0x00000000000000000000000000000000000000bb', msg: `0x${'cd'.repeat(32)}` }],
};

describe('client/frame-transaction: the chain JSON shape, encoded by the chain codec', () => {
  it('round-trips the pinned vectors byte for byte', () => {
    for (const vector of [V3, V4] as const)
      expect(encodeFrameTransaction(decodeFrameTransaction(vector as `0x${string}`))).to.equal(vector);
  });

  it('encodes and hashes as the repository encoder on ethers RLP does, and as ox does for schemes 0-2', () => {
    const fields = {
      sender: TRANSFER.from.toLowerCase(),
      nonce: 2n,
      fees: [1n, 3_000_000_000n, 0n] as [bigint, bigint, bigint],
      frames: TRANSFER.frames.map((f) => ({ ...f, flags: f.flags ?? 0, executionGas: f.executionGas!, target: f.target?.toLowerCase() })),
      signatures: [{ scheme: 0x65 }, { scheme: 0x01, signer: '0x00000000000000000000000000000000000000bb', msg: `0x${'cd'.repeat(32)}` }],
    };
    expect(encodeFrameTransaction(TRANSFER)).to.equal(encodeFrameTx(fields));
    expect(frameSignatureHash(TRANSFER)).to.equal(frameSigHash(fields));
    const v3 = decodeFrameTransaction(V3 as `0x${string}`);
    const envelope = TxEnvelopeEip8141.deserialize(V3 as TxEnvelopeEip8141.Serialized);
    expect(frameTransactionHash(v3)).to.equal(TxEnvelopeEip8141.hash(envelope));
  });

  it('decodes to the JSON field names, quantities as bigint, the sender and absent members left out', () => {
    const decoded = decodeFrameTransaction(encodeFrameTransaction(TRANSFER));
    expect(decoded).to.deep.equal({
      chainId: 8141n,
      nonce: 2n,
      from: '0x5eaf00000000000000000000000000000000a126',
      frames: [
        { mode: 1, flags: 3, executionGas: 100n, stateGas: 0n, value: 0n, data: '0x' },
        {
          mode: 2,
          flags: 0,
          target: '0x00000000000000000000000000000000000c1e77',
          executionGas: 2_600n,
          stateGas: 183_600n,
          value: 5n,
          data: '0x2a',
        },
      ],
      signatures: [
        { scheme: 0x65, signature: '0x' },
        { scheme: 0x01, signer: '0x00000000000000000000000000000000000000bb', msg: `0x${'cd'.repeat(32)}`, signature: '0x' },
      ],
      maxPriorityFeePerGas: 1n,
      maxFeePerGas: 3_000_000_000n,
    });
  });
});
