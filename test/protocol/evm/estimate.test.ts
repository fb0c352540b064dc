import { expect } from 'chai';
import { decodeCode, decodeFrameTransaction, type FrameTransaction, NEW_ACCOUNT_STATE_GAS } from '../../../protocol/index.js';
import { estimateFrameGas, FrameEstimateError, type FrameGasEstimate } from '../../../protocol/evm/estimate.js';
import { executeFrameTransaction, type ExecutionBlock, OverlayStateManager, type StateReader } from '../../../protocol/evm/index.js';
import { readFrameRequest } from '../../../protocol/frame-request.js';
import { mldsaAccount, signed, type FrameTxFields } from '../../../support/frames.js';
import { APPROVE_3, REVERTS, STORES_VALUE } from '../../../support/verify-code.js';

const CHAIN_ID = 8141n;
const BLOCK: ExecutionBlock = {
  number: 10n,
  timestamp: 1_800_000_000n,
  baseFee: 7n,
  coinbase: '0x00000000000000000000000000000000000c0ffe',
  gasLimit: 60_000_000n,
  prevRandao: `0x${'00'.repeat(32)}`,
};
const RECIPIENT = '0x00000000000000000000000000000000000f2a11';
const REVERTER = '0x0000000000000000000000000000000000010602';
const STORER = '0x0000000000000000000000000000000000010603';
const ACCOUNT = '0x0000000000000000000000000000000000010604';
const BURNER = '0x0000000000000000000000000000000000010605';
const FORWARDER = '0x0000000000000000000000000000000000010606';
const FUNDS = 10n ** 18n;
/** EIP-8037: a slot set from zero, 64 state bytes at 1,530. */
const FRESH_SLOT = 97_920n;

/** Counts 2,000 down in a loop (~48,000 gas) and stops. */
const BURNS = '0x6107d05b600190038061000357' + '00';
/** Calls BURNER with all its gas but the 1/64 a call keeps back, and reverts unless that call succeeded. */
const FORWARDS = `0x5f5f5f5f5f73${BURNER.slice(2)}5af1602257` + '5f5ffd5b00';

const hex = (value: bigint | number) => `0x${value.toString(16)}`;

/** A chain's state in memory: each run of the transaction gets a fresh overlay over it. */
function stateOf(accounts: Record<string, { balance?: bigint; nonce?: bigint; code?: string }>): StateReader {
  return {
    account: async (address) => ({ nonce: accounts[address]?.nonce ?? 0n, balance: accounts[address]?.balance ?? 0n }),
    code: async (address) => decodeCode(accounts[address]?.code ?? '0x'),
    storage: async () => `0x${'00'.repeat(32)}`,
  };
}

describe('protocol/evm/estimate: the limits each frame needs, found by running the transaction', () => {
  const mldsa = mldsaAccount();
  const reader = stateOf({
    [mldsa.address]: { balance: FUNDS },
    [ACCOUNT]: { balance: FUNDS, code: APPROVE_3 },
    [REVERTER]: { code: REVERTS },
    [STORER]: { code: STORES_VALUE },
    [BURNER]: { code: BURNS },
    [FORWARDER]: { code: FORWARDS },
  });
  const run = (tx: FrameTransaction, block: ExecutionBlock) =>
    executeFrameTransaction(tx, block, new OverlayStateManager(reader, tx.sender), { verifySignatures: false });
  const estimate = (request: object) => estimateFrameGas(readFrameRequest(request, CHAIN_ID), BLOCK, run);
  /** The transaction with the estimate's limits, signed for real, executed with its signatures verified. */
  const executeWith = async (fields: FrameTxFields, estimated: FrameGasEstimate, signers: Array<(digest: string) => string>) => {
    fields.frames.forEach((frame, i) => {
      frame.executionGas = estimated.frames[i]!.executionGas;
      frame.stateGas = estimated.frames[i]!.stateGas;
    });
    const tx = decodeFrameTransaction(signed(fields, signers));
    return executeFrameTransaction(tx, BLOCK, new OverlayStateManager(reader, tx.sender));
  };
  const fees: [bigint, bigint, bigint] = [1n, 20n, 0n];

  it('estimates an ML-DSA-65 transfer to a new account: the signed transaction executes with every frame status 1', async () => {
    const estimated = await estimate({
      from: mldsa.address,
      maxFeePerGas: hex(fees[1]),
      maxPriorityFeePerGas: hex(fees[0]),
      frames: [
        { mode: '0x1', flags: '0x3' },
        { mode: '0x2', target: RECIPIENT, value: '0x5' },
      ],
      signatures: [{ scheme: '0x65' }],
    });
    // Default code costs the sender's (warm) access; the transfer a cold access, and the new account's state gas.
    expect(estimated.frames).to.deep.equal([
      { executionGas: 100n, stateGas: 0n },
      { executionGas: 2_600n, stateGas: NEW_ACCOUNT_STATE_GAS },
    ]);
    const fields: FrameTxFields = {
      sender: mldsa.address,
      fees,
      signatures: [{ scheme: 0x65 }],
      frames: [
        { mode: 1, flags: 3, executionGas: 0n },
        { mode: 2, flags: 0, target: RECIPIENT, executionGas: 0n, value: 5n },
      ],
    };
    const executed = await executeWith(fields, estimated, [mldsa.sign]);
    expect(executed.frames.map((f) => f.status)).to.deep.equal([1, 1]);
    expect(executed.gasUsed <= estimated.gas).to.equal(true);
    // The estimate is the transaction's max gas: what the payer reserves.
    const tx = decodeFrameTransaction(signed(fields, [mldsa.sign]));
    expect(estimated.gas).to.equal((await import('../../../protocol/index.js')).frameGas(tx).maxGas);
  });

  it('finds more than a frame used where a call keeps 1/64 back, and no less than it needs', async () => {
    const request = (forwarderGas?: bigint) => ({
      from: ACCOUNT,
      frames: [
        { mode: '0x1', flags: '0x3', ...(forwarderGas === undefined ? {} : { executionGas: hex(100_000), stateGas: '0x0' }) },
        { mode: '0x2', target: FORWARDER, ...(forwarderGas === undefined ? {} : { executionGas: hex(forwarderGas), stateGas: '0x0' }) },
      ],
    });
    const estimated = await estimate(request());
    const FREE = { ...BLOCK, baseFee: 0n };
    const needed = estimated.frames[1]!.executionGas;
    const ran = await run(readFrameRequest({ ...request(needed) }, CHAIN_ID).tx, FREE);
    expect(ran.frames.map((f) => f.status)).to.deep.equal([1, 1]);
    // What the frame used (its limit's first guess) is not enough: the call would run short.
    const used = ran.frames[1]!.executionGas;
    expect(needed > used).to.equal(true);
    const short = await run(readFrameRequest(request(used), CHAIN_ID).tx, FREE);
    expect(short.frames[1]!.status).to.equal(0);
    // Within 1/64 of the least that works.
    const less = await run(readFrameRequest(request(needed - needed / 32n), CHAIN_ID).tx, FREE);
    expect(less.frames[1]!.status).to.equal(0);
  });

  it("counts a fresh slot's state gas, and keeps a limit the request gave", async () => {
    const estimated = await estimate({
      from: ACCOUNT,
      frames: [
        { mode: '0x1', flags: '0x3', executionGas: hex(50_000) },
        { mode: '0x2', target: STORER, data: '0x01' },
      ],
    });
    expect(estimated.frames[0]!.executionGas).to.equal(50_000n);
    expect(estimated.frames[1]!.stateGas).to.equal(FRESH_SLOT);
  });

  it('names the frame that reverts, with its revert data', async () => {
    const failure = await estimate({
      from: ACCOUNT,
      frames: [
        { mode: '0x1', flags: '0x3' },
        { mode: '0x2', target: REVERTER },
      ],
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).to.be.instanceOf(FrameEstimateError);
    expect((failure as FrameEstimateError).message).to.equal('frame 1 (SENDER) reverted');
    expect((failure as FrameEstimateError).frame).to.equal(1);
    expect((failure as FrameEstimateError).output).to.equal('0x');
  });

  it("says when the payer cannot cover the estimate's max cost at the fees asked", async () => {
    const poor = mldsaAccount();
    const failure = await estimateFrameGas(
      readFrameRequest(
        { from: poor.address, maxFeePerGas: hex(10n ** 9n), frames: [{ mode: '0x1', flags: '0x3' }], signatures: [{ scheme: '0x65' }] },
        CHAIN_ID,
      ),
      BLOCK,
      (tx, block) =>
        executeFrameTransaction(tx, block, new OverlayStateManager(stateOf({ [poor.address]: { balance: 1n } }), tx.sender), {
          verifySignatures: false,
        }),
    ).then(
      () => undefined,
      (err: unknown) => err as FrameEstimateError,
    );
    expect(failure?.message).to.match(/^frame 0 \(VERIFY\) reverted: /);
    expect(failure?.frame).to.equal(0);
  });
});
