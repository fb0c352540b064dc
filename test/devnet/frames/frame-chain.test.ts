import { expect } from 'chai';
import { getCreate2Address, id, keccak256, Wallet, zeroPadValue } from 'ethers';
import { FrameChain } from '../../../devnet/frames/frame-chain.js';
import { rpcClient, type Rpc } from '../../../devnet/rpc.js';
import { decodeFrameTransaction, frameGas, NEW_ACCOUNT_STATE_GAS } from '../../../protocol/index.js';
import { mldsaEntry, mldsaKeys, secp256k1Entry, signed, type FrameTxFields } from '../../../support/frames.js';
import { APPROVE_2, APPROVE_3, CREATE2_FACTORY, initCodeOf, LOGS, REVERTS, STORES_VALUE } from '../../../support/verify-code.js';
import { useAnvil } from '../../helpers/el.js';

const FUNDS = 10n ** 18n;
const FEES: [bigint, bigint, bigint] = [1_000_000_000n, 3_000_000_000n, 0n];
const RECIPIENT = '0x00000000000000000000000000000000000f2a11';
const LOGGER = '0x0000000000000000000000000000000000010601';
const REVERTER = '0x0000000000000000000000000000000000010602';
const STORER = '0x0000000000000000000000000000000000010603';
const ACCOUNT = '0x0000000000000000000000000000000000010604';
/** EIP-8037: a slot set from zero, 64 state bytes at 1,530. */
const FRESH_SLOT = 97_920n;
const FACTORY = '0x0000000000000000000000000000000000010605';

/** Fixed keys: what each test covers never depends on a draw. */
const secp = (label: string) => {
  const wallet = new Wallet(id(`frame-chain ${label}`));
  return { address: wallet.address.toLowerCase(), sign: (digest: string) => secp256k1Entry(wallet.privateKey, digest) };
};
const mldsa = (label: string) => {
  const keys = mldsaKeys(Buffer.from(id(`frame-chain ${label}`).slice(2), 'hex'));
  return { address: keys.address, sign: (digest: string) => mldsaEntry(keys, digest) };
};
const SELF = { mode: 1, flags: 3, executionGas: 10_000n };
const send = (target: string, value: bigint, extra: { stateGas?: bigint; flags?: number } = {}) => ({
  mode: 2,
  flags: extra.flags ?? 0,
  target,
  executionGas: 60_000n,
  value,
  stateGas: extra.stateGas ?? 0n,
});

describe('devnet: frame transactions executed in full over anvil (frames/frame-chain.ts)', () => {
  const anvil = useAnvil({ extraArgs: ['--no-mining'] });
  let el: Rpc;
  let chain: FrameChain;
  const balance = async (address: string) => BigInt(await el('eth_getBalance', [address, 'latest']));
  const nonce = async (address: string) => BigInt(await el('eth_getTransactionCount', [address, 'latest']));
  /** Closes a block holding `raws`, as the node stand-in does. */
  const block = async (...raws: string[]) => {
    await el('evm_mine');
    return chain.closeBlock(raws);
  };
  const latest = async () =>
    (await el('eth_getBlockByNumber', ['latest', false])) as { number: string; hash: string; baseFeePerGas: string; miner: string };

  before(async () => {
    el = rpcClient(anvil.current.url);
    chain = new FrameChain(anvil.current.url);
    await el('anvil_setCode', [LOGGER, LOGS]);
    await el('anvil_setCode', [REVERTER, REVERTS]);
    await el('anvil_setCode', [STORER, STORES_VALUE]);
    await el('anvil_setCode', [ACCOUNT, APPROVE_3]);
    await el('anvil_setCode', [FACTORY, CREATE2_FACTORY]);
  });

  it('runs an ML-DSA-65 transfer: value moved, nonce up, the payer charged gas_used × price and the coinbase the tip', async () => {
    const account = mldsa('transfer');
    await el('anvil_setBalance', [account.address, `0x${FUNDS.toString(16)}`]);
    const fields: FrameTxFields = {
      sender: account.address,
      fees: FEES,
      signatures: [{ scheme: 0x65 }],
      frames: [SELF, send(RECIPIENT, 5n, { stateGas: NEW_ACCOUNT_STATE_GAS })],
    };
    const raw = signed(fields, [account.sign]);
    const coinbaseBefore = await balance((await latest()).miner);
    expect(await block(raw)).to.deep.equal([]);
    const head = await latest();
    const record = chain.record(decodeFrameTransaction(raw).hash)!;
    const { executed } = record;
    const price = BigInt(head.baseFeePerGas) + FEES[0];
    expect(executed.effectiveGasPrice).to.equal(price);
    expect(executed.payer).to.equal(account.address);
    expect(executed.frames.map((f) => [f.status, f.executionGas, f.stateGas])).to.deep.equal([
      [1, 100n, 0n], // the sender is warm; default code draws nothing else
      [1, 2_600n, NEW_ACCOUNT_STATE_GAS], // a cold recipient that did not exist
    ]);
    // Floor-priced (a 5,261-byte entry): execution is the calldata floor, plus the state gas.
    expect(executed.gasUsed).to.equal(frameGas(decodeFrameTransaction(raw)).calldataFloor + NEW_ACCOUNT_STATE_GAS);
    expect(record).to.include({ blockHash: head.hash, blockNumber: BigInt(head.number), index: 0, cumulativeGasUsed: executed.gasUsed });
    expect(await balance(RECIPIENT)).to.equal(5n);
    expect(await nonce(account.address)).to.equal(1n);
    expect(await balance(account.address)).to.equal(FUNDS - 5n - executed.gasUsed * price);
    expect((await balance(head.miner)) - coinbaseBefore).to.equal(executed.gasUsed * FEES[0]);
  });

  it('runs two transactions of one sender in one block, the second seeing the first', async () => {
    const account = secp('twice');
    await el('anvil_setBalance', [account.address, `0x${FUNDS.toString(16)}`]);
    const transfer = (n: bigint) =>
      signed({ sender: account.address, nonce: n, fees: FEES, signatures: [{ scheme: 1 }], frames: [SELF, send(RECIPIENT, 1n)] }, [
        account.sign,
      ]);
    const before = await balance(RECIPIENT);
    expect(await block(transfer(0n), transfer(1n))).to.deep.equal([]);
    expect(await nonce(account.address)).to.equal(2n);
    expect(await balance(RECIPIENT)).to.equal(before + 2n);
    const [first, second] = [transfer(0n), transfer(1n)].map((raw) => chain.record(decodeFrameTransaction(raw).hash)!);
    expect([first!.index, second!.index]).to.deep.equal([0, 1]);
    expect(second!.cumulativeGasUsed).to.equal(first!.executed.gasUsed + second!.executed.gasUsed);
  });

  it('fails a value frame to a new account without state gas: the frame halts, the transaction is still included and paid', async () => {
    const account = secp('no state gas');
    await el('anvil_setBalance', [account.address, `0x${FUNDS.toString(16)}`]);
    const fresh = '0x00000000000000000000000000000000000f2a12';
    const raw = signed({ sender: account.address, fees: FEES, signatures: [{ scheme: 1 }], frames: [SELF, send(fresh, 1n)] }, [
      account.sign,
    ]);
    await block(raw);
    const { executed } = chain.record(decodeFrameTransaction(raw).hash)!;
    expect(executed.frames.map((f) => [f.status, f.executionGas])).to.deep.equal([
      [1, 100n],
      [0, 60_000n],
    ]);
    expect(await balance(fresh)).to.equal(0n);
    expect(await nonce(account.address)).to.equal(1n);
  });

  it("keeps a frame's logs and storage, and unrolls an atomic batch whose last frame fails (logs dropped, later frames run)", async () => {
    await el('anvil_setBalance', [ACCOUNT, `0x${FUNDS.toString(16)}`]);
    const account = { address: ACCOUNT };
    const fields = (n: bigint): FrameTxFields => ({
      sender: account.address,
      nonce: n,
      fees: FEES,
      signatures: [],
      frames: [SELF, send(LOGGER, 0n, { flags: 4 }), send(REVERTER, 0n), send(STORER, 7n, { stateGas: FRESH_SLOT })],
    });
    const raw = signed(fields(await nonce(ACCOUNT)), []);
    await block(raw);
    const { executed } = chain.record(decodeFrameTransaction(raw).hash)!;
    expect(executed.frames.map((f) => [f.status, f.logs.length])).to.deep.equal([
      [1, 0],
      [1, 0],
      [0, 0],
      [1, 1],
    ]);
    // EIP-7708: the value the last frame sends is logged as a Transfer from the system address.
    expect(executed.frames[3]!.logs).to.deep.equal([
      {
        address: '0xfffffffffffffffffffffffffffffffffffffffe',
        topics: [id('Transfer(address,address,uint256)'), zeroPadValue(ACCOUNT, 32), zeroPadValue(STORER, 32)],
        data: zeroPadValue('0x07', 32),
      },
    ]);
    expect(await el('eth_getStorageAt', [STORER, '0x0', 'latest'])).to.equal(`0x${'8'.padStart(64, '0')}`);

    const logged = signed({ ...fields(await nonce(ACCOUNT)), frames: [SELF, send(LOGGER, 0n, { flags: 4 }), send(LOGGER, 0n)] }, []);
    await block(logged);
    const kept = chain.record(decodeFrameTransaction(logged).hash)!.executed;
    expect(kept.frames.map((f) => f.status)).to.deep.equal([1, 1, 1]);
    expect(kept.frames[1]!.logs).to.deep.equal([{ address: LOGGER, topics: [`0x${'2a'.padStart(64, '0')}`], data: '0x' }]);
  });

  it('skips the rest of an atomic batch once a frame in it fails (status 2)', async () => {
    const raw = signed(
      {
        sender: ACCOUNT,
        nonce: await nonce(ACCOUNT),
        fees: FEES,
        signatures: [],
        frames: [SELF, send(REVERTER, 0n, { flags: 4 }), send(LOGGER, 0n, { flags: 4 }), send(LOGGER, 0n), send(LOGGER, 0n)],
      },
      [],
    );
    await block(raw);
    const { executed } = chain.record(decodeFrameTransaction(raw).hash)!;
    expect(executed.frames.map((f) => [f.status, f.executionGas, f.logs.length])).to.deep.equal([
      // APPROVE_3: warm sender + PUSH1, PUSH0, PUSH0; REVERTER: cold + two PUSH0; the last LOGGER is still cold (the skipped frames touched nothing): + LOG1 757.
      [1, 107n, 0],
      [0, 2_604n, 0],
      [2, 0n, 0],
      [2, 0n, 0],
      [1, 3_357n, 1],
    ]);
  });

  it("charges a sponsor ([only, pay]) and creates the counterfactual sender from the pay frame's state gas", async () => {
    const sender = secp('sponsored sender');
    const sponsor = secp('sponsor');
    await el('anvil_setBalance', [sponsor.address, `0x${FUNDS.toString(16)}`]);
    const raw = signed(
      {
        sender: sender.address,
        fees: FEES,
        signatures: [{ scheme: 1 }, { scheme: 1, signer: sponsor.address }],
        frames: [
          { mode: 1, flags: 2, executionGas: 10_000n },
          { mode: 1, flags: 1, target: sponsor.address, executionGas: 10_000n, stateGas: NEW_ACCOUNT_STATE_GAS },
          send(LOGGER, 0n),
        ],
      },
      [sender.sign, sponsor.sign],
    );
    await block(raw);
    const { executed } = chain.record(decodeFrameTransaction(raw).hash)!;
    expect(executed.payer).to.equal(sponsor.address);
    expect(executed.frames.map((f) => [f.status, f.stateGas])).to.deep.equal([
      [1, 0n],
      [1, NEW_ACCOUNT_STATE_GAS],
      [1, 0n],
    ]);
    expect(await nonce(sender.address)).to.equal(1n);
    expect(await balance(sender.address)).to.equal(0n);
    expect(await balance(sponsor.address)).to.equal(FUNDS - executed.gasUsed * executed.effectiveGasPrice);
  });

  it("forgets a failed frame's warmth: the next frame to the same target pays its cold entry again", async () => {
    const raw = signed(
      { sender: ACCOUNT, nonce: await nonce(ACCOUNT), fees: FEES, signatures: [], frames: [SELF, send(REVERTER, 0n), send(REVERTER, 0n)] },
      [],
    );
    await block(raw);
    const { executed } = chain.record(decodeFrameTransaction(raw).hash)!;
    expect(executed.frames.map((f) => [f.status, f.executionGas])).to.deep.equal([
      [1, 107n],
      [0, 2_604n],
      [0, 2_604n],
    ]);
  });

  it('leaves out what is statically invalid under EIP-8141 (another chain id, a reserved flag), naming the rule', async () => {
    const account = secp('static');
    await el('anvil_setBalance', [account.address, `0x${FUNDS.toString(16)}`]);
    const transfer = (extra: Partial<FrameTxFields>, flags = 0) =>
      signed(
        { sender: account.address, fees: FEES, signatures: [{ scheme: 1 }], frames: [SELF, send(RECIPIENT, 1n, { flags })], ...extra },
        [account.sign],
      );
    const skipped = await block(transfer({ chainId: 1n }), transfer({}, 8));
    expect(skipped.map((s) => [s.reason, s.why])).to.deep.equal([
      ['other', 'wrong-chain-id: chain id 1 is not 8141'],
      ['other', 'frame-invalid: frame 1: flags above bit 2 must be zero'],
    ]);
    expect(await nonce(account.address)).to.equal(0n);
  });

  it('onboards a sender its deploy frame creates ([deploy, only, pay]): no creation state gas owed at the pay frame', async () => {
    const init = initCodeOf(APPROVE_2);
    const sender = getCreate2Address(FACTORY, `0x${'00'.repeat(32)}`, keccak256(init)).toLowerCase();
    const sponsor = secp('onboarding sponsor');
    // EIP-8037 in the deploy frame's pool: the account (120 bytes) and its code, at 1,530 a byte.
    const deployed = 1_530n * (120n + BigInt((APPROVE_2.length - 2) / 2));
    await el('anvil_setBalance', [sponsor.address, `0x${FUNDS.toString(16)}`]);
    const raw = signed(
      {
        sender,
        fees: FEES,
        // Default code reads a payment's entry at index 1; the sender's code approves without one.
        signatures: [{ scheme: 0 }, { scheme: 1, signer: sponsor.address }],
        frames: [
          { mode: 0, flags: 0, target: FACTORY, executionGas: 80_000n, stateGas: deployed, data: init },
          { mode: 1, flags: 2, executionGas: 10_000n },
          { mode: 1, flags: 1, target: sponsor.address, executionGas: 10_000n },
          send(LOGGER, 0n),
        ],
      },
      [() => '0x', sponsor.sign],
    );
    expect(await block(raw)).to.deep.equal([]);
    const { executed } = chain.record(decodeFrameTransaction(raw).hash)!;
    expect(executed.payer).to.equal(sponsor.address);
    expect(executed.frames.map((f) => [f.status, f.stateGas])).to.deep.equal([
      [1, deployed],
      [1, 0n],
      [1, 0n],
      [1, 0n],
    ]);
    // A contract starts at nonce 1 (EIP-161); APPROVE then takes the transaction's.
    expect(await nonce(sender)).to.equal(2n);
    expect(await el('eth_getCode', [sender, 'latest'])).to.equal(APPROVE_2.toLowerCase());
  });

  it('leaves out what the EL would refuse, names why, and writes nothing of it', async () => {
    const account = secp('refused');
    const stranger = secp('stranger');
    await el('anvil_setBalance', [account.address, `0x${FUNDS.toString(16)}`]);
    const transfer = (n: bigint, signer = account) =>
      signed({ sender: account.address, nonce: n, fees: FEES, signatures: [{ scheme: 1 }], frames: [SELF, send(RECIPIENT, 1n)] }, [
        signer.sign,
      ]);
    const low = signed({ sender: account.address, fees: [0n, 1n, 0n], signatures: [{ scheme: 1 }], frames: [SELF, send(RECIPIENT, 1n)] }, [
      account.sign,
    ]);
    const before = await balance(RECIPIENT);
    const skipped = await block(transfer(1n), transfer(0n, stranger), low, '0x06c0');
    expect(skipped.map((s) => [s.reason, s.why])).to.deep.equal([
      ['nonce_too_high', "nonce 1, the sender's is 0"],
      ['other', 'sig-invalid: signature 0: the SECP256K1 signature does not recover the signer'],
      ['fee_cap_too_low', `max fee per gas 1 less than block base fee ${BigInt((await latest()).baseFeePerGas)}`],
      ['other', 'rlp-invalid: payload must have 7 items, not 0'],
    ]);
    expect(skipped[0]!.hash).to.equal(decodeFrameTransaction(transfer(1n)).hash);
    expect(chain.record(skipped[0]!.hash)).to.equal(undefined);
    expect([await balance(account.address), await nonce(account.address), await balance(RECIPIENT)]).to.deep.equal([FUNDS, 0n, before]);
  });

  it('refuses a transaction whose VERIFY frame fails, undoing what earlier frames of it did', async () => {
    const raw = signed(
      {
        sender: ACCOUNT,
        nonce: await nonce(ACCOUNT),
        fees: FEES,
        signatures: [],
        frames: [{ mode: 1, flags: 1, target: REVERTER, executionGas: 10_000n }, send(RECIPIENT, 1n)],
      },
      [],
    );
    const funds = await balance(ACCOUNT);
    expect((await block(raw)).map((s) => s.why)).to.deep.equal(['VERIFY frame 0 failed']);
    expect(await balance(ACCOUNT)).to.equal(funds);
  });
});
