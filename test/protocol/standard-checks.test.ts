import { expect } from 'chai';
import { getBytes, type TransactionLike } from 'ethers';
import { SECP256K1_N } from '../../protocol/signatures.js';
import { checkStandardTransaction, type StandardLimits } from '../../protocol/standard-checks.js';
import { decodeStandardTransaction, type StandardTransaction } from '../../protocol/standard-codec.js';
import { RECIPIENT } from '../../support/frames.js';
import { walletFor } from '../../support/keys.js';
import { verdictOf } from '../helpers/refusals.js';

const LIMITS: StandardLimits = { chainId: 8141n, blockGasLimit: 60_000_000n };
const GWEI = 1_000_000_000n;
const wallet = walletFor('protocol: standard checks');
const sign = (tx: TransactionLike) =>
  wallet.signTransaction({ chainId: 8141, nonce: 9, to: RECIPIENT, value: 3n, gasLimit: 21_000, ...tx });
const decoded = async (tx: TransactionLike) => decodeStandardTransaction(getBytes(await sign(tx)));
/** The refusal as a client reads it (`reason: detail`), or 'accepted'. */
const verdictOfTx = (tx: StandardTransaction, limits: StandardLimits = LIMITS) => verdictOf(() => checkStandardTransaction(tx, limits));
const verdict = async (raw: string, limits: StandardLimits = LIMITS) => verdictOfTx(decodeStandardTransaction(getBytes(raw)), limits);

describe("protocol: a standard transaction's static validity", () => {
  it('refuses another chain id, for typed and legacy transactions alike, and reads the chain id from its limits', async () => {
    expect(await verdict(await sign({ type: 2, chainId: 1, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n }))).to.equal(
      'wrong-chain-id: chain id 1 is not 8141',
    );
    expect(await verdict(await sign({ type: 0, chainId: 1, gasPrice: GWEI }))).to.equal('wrong-chain-id: chain id 1 is not 8141');
    expect(await verdict(await sign({ type: 0, chainId: 1, gasPrice: GWEI }), { ...LIMITS, chainId: 1n })).to.equal('accepted');
  });

  it('refuses a nonce of 2^64 - 1 (EIP-2681), takes 2^64 - 2', async () => {
    const tx = await decoded({ type: 2, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
    expect(verdictOfTx({ ...tx, nonce: (1n << 64n) - 1n })).to.equal(
      'nonce-max: nonce has max value: 18446744073709551615 cannot be incremented (EIP-2681)',
    );
    expect(verdictOfTx({ ...tx, nonce: (1n << 64n) - 2n })).to.equal('accepted');
  });

  it('takes a gas limit equal to the block gas limit and refuses one more (gas-limit)', async () => {
    const limits = { ...LIMITS, blockGasLimit: 1_000_000n };
    const at = (gasLimit: number) => sign({ type: 2, gasLimit, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
    expect(await verdict(await at(1_000_000), limits)).to.equal('accepted');
    expect(await verdict(await at(1_000_001), limits)).to.equal('gas-limit: gas limit 1000001 exceeds the block gas limit 1000000');
  });

  it('takes 16 777 216 gas and refuses one more under the EIP-7825 cap (gas-cap)', async () => {
    const at = (gasLimit: number) => sign({ type: 2, gasLimit, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
    expect(await verdict(await at(16_777_216))).to.equal('accepted');
    expect(await verdict(await at(16_777_217))).to.equal('gas-cap: gas limit 16777217 exceeds the transaction gas cap 16777216 (EIP-7825)');
  });

  it('names the block gas limit first when a gas limit is over both', async () => {
    const raw = await sign({ type: 2, gasLimit: 16_777_217, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
    expect(await verdict(raw, { ...LIMITS, blockGasLimit: 10_000_000n })).to.equal(
      'gas-limit: gas limit 16777217 exceeds the block gas limit 10000000',
    );
  });

  it('takes 49 152 bytes of init code and refuses 49 153 (EIP-3860), for creations only', async () => {
    const create = (bytes: number) =>
      sign({ type: 2, to: null, data: `0x${'00'.repeat(bytes)}`, gasLimit: 600_000, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
    expect(await verdict(await create(49_152))).to.equal('accepted');
    expect(await verdict(await create(49_153))).to.equal('initcode-size: init code of 49153 bytes exceeds 49152 (EIP-3860)');
    const call = await sign({
      type: 2,
      data: `0x${'00'.repeat(49_153)}`,
      gasLimit: 600_000,
      maxFeePerGas: GWEI,
      maxPriorityFeePerGas: 0n,
    });
    expect(await verdict(call)).to.equal('accepted');
  });

  it('takes the intrinsic gas exactly and refuses one less (intrinsic-gas)', async () => {
    const at = (gasLimit: number) => sign({ type: 2, gasLimit, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
    expect(await verdict(await at(21_000))).to.equal('accepted');
    expect(await verdict(await at(20_999))).to.equal(
      "intrinsic-gas: intrinsic gas too low: gas limit 20999 is below the transaction's intrinsic gas 21000",
    );
  });

  it('refuses r or s of 0 or at least n, and a high s (EIP-2); takes s = n/2', async () => {
    const tx = await decoded({ type: 2, maxFeePerGas: GWEI, maxPriorityFeePerGas: 0n });
    for (const [r, s] of [
      [0n, tx.s],
      [SECP256K1_N, tx.s],
      [tx.r, 0n],
      [tx.r, SECP256K1_N],
    ] as const) {
      expect(verdictOfTx({ ...tx, r, s }), `r ${r}, s ${s}`).to.equal('sig-invalid: the signature is out of range');
    }
    expect(verdictOfTx({ ...tx, s: SECP256K1_N / 2n + 1n })).to.equal('sig-invalid: the signature has a high s value');
    expect(verdictOfTx({ ...tx, s: SECP256K1_N / 2n })).to.equal('accepted');
  });
});
