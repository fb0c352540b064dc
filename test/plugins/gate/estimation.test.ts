/**
 * svc_estimateFrameGas and eth_estimateGas of a frame transaction, on the devnet through the
 * ingress: each transaction is built from the estimate, signed, sent, and every frame executes.
 */
import { expect } from 'chai';
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, http } from 'viem';
import { NEW_ACCOUNT_STATE_GAS } from '../../../protocol/index.js';
import { mldsaAccount, signed, type FrameFields, type FrameTxFields } from '../../../support/frames.js';
import { call, receiptOf, rpc } from '../../../support/http.js';
import { APPROVE_3, REVERTS, STORES_VALUE } from '../../../support/verify-code.js';
import { fund, useDevnet } from '../../helpers/devnet.js';

const STORER = '0x00000000000000000000000000000000000e5701';
const REVERTER = '0x00000000000000000000000000000000000e5702';
const ACCOUNT = '0x00000000000000000000000000000000000e5703';
const READER = '0x00000000000000000000000000000000000e5704';
const FEES: [bigint, bigint, bigint] = [0n, 3_000_000_000n, 0n];
/** EIP-8037: a slot set from zero, 64 state bytes at 1,530. */
const FRESH_SLOT = 97_920n;
const hex = (value: bigint | number) => `0x${value.toString(16)}`;

interface Estimate {
  frames: Array<{ executionGas: string; stateGas: string }>;
  gas: string;
}
interface FrameReceipt {
  status: string;
  frameReceipts: Array<{ status: string }>;
}

/** The request's JSON shape (ox's TransactionRequest.Rpc) of `fields`, every limit left out. */
const requestOf = (fields: FrameTxFields) => ({
  type: '0x6',
  from: fields.sender,
  maxFeePerGas: hex(fields.fees![1]),
  maxPriorityFeePerGas: hex(fields.fees![0]),
  frames: fields.frames.map((f) => ({
    mode: hex(f.mode),
    flags: hex(f.flags),
    ...(f.target === undefined ? {} : { target: f.target }),
    ...(f.value === undefined ? {} : { value: hex(f.value) }),
    ...(f.data === undefined ? {} : { data: f.data }),
  })),
  signatures: fields.signatures.map((s) => ({ scheme: hex(s.scheme) })),
});

describe('gate: frame transactions estimated frame by frame, then sent (estimation.ts, on the devnet)', () => {
  const devnet = useDevnet();
  let url: string;
  let anvil: string;
  let ethers: JsonRpcProvider;

  before(async () => {
    url = devnet.current.ingress.url;
    anvil = devnet.current.anvil.url;
    ethers = new JsonRpcProvider(url, 8141, { staticNetwork: true, batchMaxCount: 1 });
    await call(anvil, 'anvil_setCode', [STORER, STORES_VALUE]);
    await call(anvil, 'anvil_setCode', [REVERTER, REVERTS]);
    await call(anvil, 'anvil_setCode', [ACCOUNT, APPROVE_3]);
    await call(anvil, 'anvil_setBalance', [ACCOUNT, hex(10n ** 18n)]);
  });
  after(() => ethers?.destroy());

  const errorOf = async (method: string, params: unknown[]) =>
    (JSON.parse((await rpc(url, method, params)).text) as { error?: unknown }).error;

  /** Sets the estimate's limits on `fields`, signs, sends, and answers the receipt. */
  const sendEstimated = async (fields: FrameTxFields, estimate: Estimate, signers: Array<(digest: string) => string>) => {
    fields.frames.forEach((frame: FrameFields, i) => {
      frame.executionGas = BigInt(estimate.frames[i]!.executionGas);
      frame.stateGas = BigInt(estimate.frames[i]!.stateGas);
    });
    const hash = await call<string>(url, 'eth_sendRawTransaction', [signed(fields, signers)]);
    return receiptOf<FrameReceipt>(url, hash);
  };

  it('an ML-DSA-65 transfer to a new account (ethers): every frame status 1, eth_estimateGas agrees', async () => {
    const account = mldsaAccount();
    await fund(devnet.current, account.address);
    const recipient = '0x00000000000000000000000000000000000e5711';
    const fields: FrameTxFields = {
      sender: account.address,
      fees: FEES,
      signatures: [{ scheme: 0x65 }],
      frames: [
        { mode: 1, flags: 3, executionGas: 0n },
        { mode: 2, flags: 0, target: recipient, executionGas: 0n, value: 5n },
      ],
    };
    const estimate = (await ethers.send('svc_estimateFrameGas', [requestOf(fields), 'latest'])) as Estimate;
    expect(estimate.frames[1]!.stateGas).to.equal(hex(NEW_ACCOUNT_STATE_GAS));
    expect(await ethers.send('eth_estimateGas', [requestOf(fields)])).to.equal(estimate.gas);
    const receipt = await sendEstimated(fields, estimate, [account.sign]);
    expect(receipt.frameReceipts.map((f) => f.status)).to.deep.equal(['0x1', '0x1']);
    expect(BigInt(await ethers.send('eth_getBalance', [recipient, 'latest']))).to.equal(5n);
  });

  it('a SENDER frame writing a fresh slot (viem): its state gas estimated, every frame status 1', async () => {
    const account = mldsaAccount();
    await fund(devnet.current, account.address);
    const viem = createPublicClient({ transport: http(url) });
    const fields: FrameTxFields = {
      sender: account.address,
      fees: FEES,
      signatures: [{ scheme: 0x65 }],
      frames: [
        { mode: 1, flags: 3, executionGas: 0n },
        { mode: 2, flags: 0, target: STORER, executionGas: 0n, data: '0x2a' },
      ],
    };
    const estimate = (await viem.request({ method: 'svc_estimateFrameGas' as never, params: [requestOf(fields)] as never })) as Estimate;
    expect(estimate.frames[1]!.stateGas).to.equal(hex(FRESH_SLOT));
    const receipt = await sendEstimated(fields, estimate, [account.sign]);
    expect(receipt.frameReceipts.map((f) => f.status)).to.deep.equal(['0x1', '0x1']);
  });

  it("a contract account's transfer: every frame status 1", async () => {
    const nonce = await call<string>(url, 'eth_getTransactionCount', [ACCOUNT, 'latest']);
    const fields: FrameTxFields = {
      sender: ACCOUNT,
      nonce: BigInt(nonce),
      fees: FEES,
      signatures: [],
      frames: [
        { mode: 1, flags: 3, executionGas: 0n },
        { mode: 2, flags: 0, target: '0x00000000000000000000000000000000000e5712', executionGas: 0n, value: 9n },
      ],
    };
    const estimate = await call<Estimate>(url, 'svc_estimateFrameGas', [requestOf(fields)]);
    const receipt = await sendEstimated(fields, estimate, []);
    expect(receipt.frameReceipts.map((f) => f.status)).to.deep.equal(['0x1', '0x1']);
  });

  it('names the frame that reverts, as eth_estimateGas answers a revert (code 3, its data)', async () => {
    const request = {
      from: ACCOUNT,
      frames: [
        { mode: '0x1', flags: '0x3' },
        { mode: '0x2', target: REVERTER },
      ],
    };
    const error = await errorOf('svc_estimateFrameGas', [request]);
    expect(error).to.deep.equal({ code: 3, message: 'execution reverted: frame 1 (SENDER) reverted', data: '0x' });
    expect(await errorOf('eth_estimateGas', [{ ...request, type: '0x6' }])).to.deep.equal(error);
  });

  it('stops an estimate that would read more of the EL than an estimate may (2,000 accounts, codes and slots)', async () => {
    // Reads slots 2,100 down to 1, one SLOAD each.
    await call(anvil, 'anvil_setCode', [READER, '0x6108345b80545060019003806100035700']);
    const request = {
      from: ACCOUNT,
      frames: [
        { mode: '0x1', flags: '0x3' },
        { mode: '0x2', target: READER },
      ],
    };
    expect(await errorOf('svc_estimateFrameGas', [request])).to.deep.equal({
      code: -32000,
      message: 'gas estimation failed: the transaction reads more state than an estimate may (2000 accounts, codes and slots)',
    });
  });

  it('refuses what is not a frame transaction request with -32602, and a block the EL lacks with "header not found"', async () => {
    expect(await errorOf('svc_estimateFrameGas', [{ from: ACCOUNT, frames: [] }])).to.deep.equal({
      code: -32602,
      message: 'invalid params: frame transaction: frames must be a list of 1 to 64 frames',
    });
    expect(await errorOf('svc_estimateFrameGas', [{ from: ACCOUNT, frames: [{ mode: '0x1', flags: '0x3' }] }, '0xffffff'])).to.deep.equal({
      code: -32000,
      message: 'header not found',
    });
  });
});
