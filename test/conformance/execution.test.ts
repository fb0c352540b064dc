/**
 * EEST execution cases re-expressed against the devnet's frame runner: test_value_transfer
 * (@d4d56adb), the valid cases of test_frame_transactions (@78a3207) and of
 * test_target_resolution (@2ff2383), and the cases the bogota revision of those files added
 * (value_transfer @ebea702, target_resolution @32df523: INVENTORY.md section 6). Each checks the
 * frames' receipts, the payer, the settled gas and the state after, as EEST does; the sender's
 * VERIFY frame pays the pin's 100 (its warm entry), where older EEST revisions have 0.
 */
import { expect } from 'chai';
import { id, Wallet, zeroPadValue } from 'ethers';
import { decodeFrameTransaction, frameGas, NEW_ACCOUNT_STATE_GAS } from '../../protocol/index.js';
import { secp256k1Entry, signed, type FrameFields, type FrameTxFields } from '../../support/frames.js';
import { APPROVE_2, APPROVE_3, LOGS, REVERTS } from '../../support/verify-code.js';
import { FRESH } from './eest.js';
import { useRunner } from './runner.js';

const FUNDS = 10n ** 18n;
const FEES: [bigint, bigint, bigint] = [1_000_000_000n, 3_000_000_000n, 0n];
const VERIFY: FrameFields = { mode: 1, flags: 3, executionGas: 100_000n };
const IDENTITY = '0x0000000000000000000000000000000000000004';
const BN254_ADD = '0x0000000000000000000000000000000000000006';
const P256VERIFY = '0x0000000000000000000000000000000000000100';
/** Between the BLS12-381 precompiles (up to 0x11) and P256VERIFY: no precompile. */
const INSIDE_THE_GAP = '0x0000000000000000000000000000000000000012';
const SYSTEM = '0xfffffffffffffffffffffffffffffffffffffffe';
const TRANSFER = id('Transfer(address,address,uint256)');
const FRAME_GAS = 50_000n;
/** SSTORE(1, 1), STOP. */
const SSTORE_1_1 = '0x600160015500';

const account = (label: string) => new Wallet(id(`conformance execution ${label}`));
const max = (a: bigint, b: bigint) => (a > b ? a : b);

describe('conformance: EEST execution cases (EIP-8141), against the devnet frame runner', () => {
  const runner = useRunner();

  /** `fields` from `from` (funded), signed by `from` and `also` in entry order. */
  async function send(from: Wallet, fields: Omit<FrameTxFields, 'sender'> & { sender?: string }, also: Wallet[] = []) {
    await runner.el('anvil_setBalance', [from.address.toLowerCase(), `0x${FUNDS.toString(16)}`]);
    const tx: FrameTxFields = { sender: from.address.toLowerCase(), fees: FEES, ...fields };
    const raw = signed(
      tx,
      [from, ...also].map((key) => (digest: string) => secp256k1Entry(key.privateKey, digest)),
    );
    return { raw, executed: await runner.run(raw) };
  }

  describe('test_value_transfer', () => {
    for (const [name, target, entry] of [
      ['target_other_account', 'other', 2_600n],
      ['target_sender_explicitly', 'sender', 100n],
      ['target_sender_via_empty_target', undefined, 100n],
    ] as const) {
      it(`test_value_transfer[${name}]`, async () => {
        const sender = account(name);
        const recipient = `0x${'00'.repeat(16)}${Buffer.from(name.slice(0, 4)).toString('hex')}`;
        await runner.el('anvil_setBalance', [recipient, '0x1']);
        const to = target === 'other' ? recipient : target === 'sender' ? sender.address.toLowerCase() : undefined;
        const value = 10n ** 15n;
        const { raw, executed } = await send(sender, {
          signatures: [{ scheme: 1 }],
          frames: [VERIFY, { mode: 2, flags: 0, ...(to === undefined ? {} : { target: to }), executionGas: 30_000n, value }],
        });
        const gas = frameGas(decodeFrameTransaction(raw));
        expect(executed.payer).to.equal(sender.address.toLowerCase());
        expect(executed.gasUsed).to.equal(max(gas.intrinsic + 100n + entry, gas.calldataFloor));
        const logs =
          target === 'other'
            ? [
                {
                  address: SYSTEM,
                  topics: [TRANSFER, zeroPadValue(sender.address.toLowerCase(), 32), zeroPadValue(recipient, 32)],
                  data: zeroPadValue('0x038d7ea4c68000', 32),
                },
              ]
            : [];
        expect(executed.frames).to.deep.equal([
          { status: 1, executionGas: 100n, stateGas: 0n, logs: [] },
          { status: 1, executionGas: entry, stateGas: 0n, logs },
        ]);
        expect(await runner.nonce(sender.address)).to.equal(1n);
        if (target === 'other') expect(await runner.balance(recipient)).to.equal(1n + value);
      });
    }
  });

  describe('test_value_transfer (bogota)', () => {
    it('test_value_transfer_exceeding_balance', async () => {
      const sender = account('exceeding balance');
      const payer = account('exceeding balance payer');
      const recipient = '0x00000000000000000000000000000000000e4e03';
      const balance = 10n ** 15n;
      await runner.el('anvil_setBalance', [sender.address.toLowerCase(), `0x${balance.toString(16)}`]);
      await runner.el('anvil_setBalance', [payer.address.toLowerCase(), `0x${FUNDS.toString(16)}`]);
      await runner.el('anvil_setBalance', [recipient, '0x1']);
      const raw = signed(
        {
          sender: sender.address.toLowerCase(),
          fees: FEES,
          signatures: [{ scheme: 1 }, { scheme: 1, signer: payer.address.toLowerCase() }],
          frames: [
            { mode: 1, flags: 2, executionGas: 100_000n },
            { mode: 1, flags: 1, target: payer.address.toLowerCase(), executionGas: 100_000n },
            { mode: 2, flags: 0, target: recipient, executionGas: 30_000n, value: balance + 1n },
          ],
        },
        [sender, payer].map((key) => (digest: string) => secp256k1Entry(key.privateKey, digest)),
      );
      const executed = await runner.run(raw);
      // The cold entry is charged before the balance is found short; the failed frame logs no transfer.
      expect(executed.payer).to.equal(payer.address.toLowerCase());
      expect(executed.frames).to.deep.equal([
        { status: 1, executionGas: 100n, stateGas: 0n, logs: [] },
        { status: 1, executionGas: 2_600n, stateGas: 0n, logs: [] },
        { status: 0, executionGas: 2_600n, stateGas: 0n, logs: [] },
      ]);
      expect(await runner.nonce(sender.address)).to.equal(1n);
      expect(await runner.balance(sender.address)).to.equal(balance);
      expect(await runner.balance(recipient)).to.equal(1n);
    });
  });

  describe('test_frame_transactions', () => {
    it('test_transfer_with_default_code', async () => {
      const sender = account('transfer');
      const recipient = '0x00000000000000000000000000000000000e4e01';
      await runner.el('anvil_setBalance', [recipient, '0x1']);
      const { executed } = await send(sender, {
        signatures: [{ scheme: 1 }],
        frames: [VERIFY, { mode: 2, flags: 0, target: recipient, executionGas: 100_000n, value: 10n ** 17n }],
      });
      expect(executed.payer).to.equal(sender.address.toLowerCase());
      expect(executed.frames[0]!.logs).to.deep.equal([]);
      expect(await runner.balance(recipient)).to.equal(1n + 10n ** 17n);
      expect(await runner.nonce(sender.address)).to.equal(1n);
    });

    it('test_contract_sender_approves', async () => {
      const contract = await runner.contract(APPROVE_3);
      const store = await runner.contract(SSTORE_1_1);
      await runner.el('anvil_setBalance', [contract, `0x${FUNDS.toString(16)}`]);
      await runner.el('anvil_setNonce', [contract, '0x1']);
      const raw = signed(
        {
          sender: contract,
          nonce: 1n,
          fees: FEES,
          signatures: [],
          // EEST gives the frame DEFAULT_FRAME_STATE_GAS_LIMIT; its fresh SSTORE needs 97,920 of it.
          frames: [VERIFY, { mode: 2, flags: 0, target: store, executionGas: 100_000n, stateGas: 100_000n }],
        },
        [],
      );
      const executed = await runner.run(raw);
      expect(executed.payer).to.equal(contract);
      expect(executed.frames.map((f) => f.status)).to.deep.equal([1, 1]);
      expect(await runner.nonce(contract)).to.equal(2n);
      expect(await runner.slot(store, 1)).to.equal(1n);
    });

    it('test_eoa_paymaster', async () => {
      const sender = account('paymaster sender');
      const payer = account('paymaster');
      await runner.el('anvil_setBalance', [payer.address.toLowerCase(), `0x${FUNDS.toString(16)}`]);
      const { executed } = await send(
        sender,
        {
          signatures: [{ scheme: 1 }, { scheme: 1, signer: payer.address.toLowerCase() }],
          frames: [
            { mode: 1, flags: 2, executionGas: 100_000n },
            { mode: 1, flags: 1, target: payer.address.toLowerCase(), executionGas: 100_000n },
            { mode: 2, flags: 0, target: '0x00000000000000000000000000000000000e4e02', executionGas: 100_000n },
          ],
        },
        [payer],
      );
      expect(executed.payer).to.equal(payer.address.toLowerCase());
      expect(await runner.balance(sender.address)).to.equal(FUNDS);
      expect(await runner.nonce(sender.address)).to.equal(1n);
      expect(await runner.nonce(payer.address)).to.equal(0n);
    });

    for (const [name, first, second, statuses, logsOfFirst] of [
      ['unrolls_executed_frames', 'logger', 'reverter', [1, 1, 0], 0],
      ['skips_remaining_frames', 'reverter', 'logger', [1, 0, 2], undefined],
    ] as const) {
      it(`test_atomic_batch_rollback[${name}]`, async () => {
        const at = { logger: await runner.contract(LOGS), reverter: await runner.contract(REVERTS) };
        const { executed } = await send(account(`batch ${name}`), {
          signatures: [{ scheme: 1 }],
          frames: [
            VERIFY,
            { mode: 2, flags: 4, target: at[first], executionGas: 100_000n },
            { mode: 2, flags: 0, target: at[second], executionGas: 100_000n },
          ],
        });
        expect(executed.frames.map((f) => f.status)).to.deep.equal(statuses);
        if (logsOfFirst !== undefined) expect(executed.frames[1]!.logs).to.have.length(logsOfFirst);
        if (statuses[2] === 2) expect(executed.frames[2]!.executionGas).to.equal(0n);
      });
    }
  });

  describe('test_frame_transactions (bogota)', () => {
    for (const [name, inner, wrote, state] of [
      ['refused_approval', APPROVE_2, 0n, FRESH],
      ['plain_return', '0x00', 1n, 2n * FRESH],
    ] as const) {
      it(`test_refused_approval_reverts_only_its_call_frame[${name}]`, async () => {
        const code = await runner.contract(inner);
        // SSTORE(2, DELEGATECALL(GAS, inner, 0, 0, 0, 0)), SSTORE(1, 1), STOP: the DEFAULT frame
        // allows no approval, so the inner APPROVE(2) reverts its own call only.
        const target = await runner.contract(`0x5f5f5f5f73${code.slice(2)}5af4600255600160015500`);
        const { executed } = await send(account(`refused approval ${name}`), {
          signatures: [{ scheme: 1 }],
          frames: [VERIFY, { mode: 0, flags: 0, target, executionGas: FRAME_GAS, stateGas: 2n * FRESH }],
        });
        expect(executed.frames[0]).to.deep.include({ status: 1, executionGas: 100n, logs: [] });
        expect(executed.frames[1]).to.deep.include({ status: 1, stateGas: state });
        expect([await runner.slot(target, 2), await runner.slot(target, 1)]).to.deep.equal([wrote, 1n]);
      });
    }
  });

  describe('test_target_resolution', () => {
    for (const [data, words] of [
      ['no_input', 0n],
      ['one_word', 1n],
      ['two_words', 2n],
    ] as const) {
      for (const [mode, modeName] of [
        [0, 'default_mode'],
        [1, 'verify_mode'],
        [2, 'sender_mode'],
      ] as const) {
        it(`test_precompile_target[${data}-${modeName}]`, async () => {
          const bytes = data === 'no_input' ? '0x' : `0x${'01'.repeat(data === 'one_word' ? 32 : 33)}`;
          const { executed } = await send(account(`precompile ${data} ${modeName}`), {
            signatures: [{ scheme: 1 }],
            frames: [VERIFY, { mode, flags: 0, target: IDENTITY, executionGas: FRAME_GAS, data: bytes }],
          });
          // A precompile is warm: 100 at entry, then IDENTITY's 15 + 3 a word.
          expect(executed.frames[1]).to.deep.include({ status: 1, executionGas: 100n + 15n + 3n * words });
        });
      }
    }

    /** A frame transaction from a funded sender, signed, not yet run. */
    async function rawFrom(label: string, frames: FrameFields[]): Promise<string> {
      const from = account(label);
      await runner.el('anvil_setBalance', [from.address.toLowerCase(), `0x${FUNDS.toString(16)}`]);
      const tx: FrameTxFields = { sender: from.address.toLowerCase(), fees: FEES, signatures: [{ scheme: 1 }], frames };
      return signed(tx, [(digest: string) => secp256k1Entry(from.privateKey, digest)]);
    }

    it('test_verify_frame_precompile_rejecting_its_input', async () => {
      // The precompile halts in a VERIFY frame: the transaction cannot be included.
      const raw = await rawFrom('verify bn254 rejects', [
        VERIFY,
        { mode: 1, flags: 0, target: BN254_ADD, executionGas: FRAME_GAS, data: `0x${'ff'.repeat(128)}` },
      ]);
      expect(await runner.leftOut(raw)).to.equal('VERIFY frame 1 failed');
    });

    it('test_verify_frame_target_above_the_precompile_gap', async () => {
      // P256VERIFY (EIP-7951, at 0x100) with no input answers empty, for its 6,900.
      const { executed } = await send(account('verify p256 gap above'), {
        signatures: [{ scheme: 1 }],
        frames: [VERIFY, { mode: 1, flags: 0, target: P256VERIFY, executionGas: FRAME_GAS }],
      });
      expect(executed.frames[1]).to.deep.include({ status: 1, executionGas: 100n + 6_900n });
    });

    it('test_verify_frame_target_inside_the_precompile_gap', async () => {
      // 0x12 is no precompile: default code runs, and reverts on a VERIFY frame approving nothing.
      const raw = await rawFrom('verify gap inside', [VERIFY, { mode: 1, flags: 0, target: INSIDE_THE_GAP, executionGas: FRAME_GAS }]);
      expect(await runner.leftOut(raw)).to.equal('VERIFY frame 1 failed');
    });

    it('test_entry_charge_halt_unrolls_batch', async () => {
      // What the worker's frame takes with a cold entry, measured on a twin (EEST gives it exactly that).
      const twin = await runner.contract(SSTORE_1_1);
      const { executed: measured } = await send(account('unroll twin'), {
        signatures: [{ scheme: 1 }],
        frames: [VERIFY, { mode: 0, flags: 0, target: twin, executionGas: FRAME_GAS, stateGas: FRESH }],
      });
      const workerGas = measured.frames[1]!.executionGas;
      expect(measured.frames[1]).to.deep.include({ status: 1, stateGas: FRESH });
      const worker = await runner.contract(SSTORE_1_1);
      const funded = '0x000000000000000000000000000000000000eb03';
      await runner.el('anvil_setBalance', [funded, '0x1']);
      const { executed } = await send(account('unroll'), {
        signatures: [{ scheme: 1 }],
        frames: [
          VERIFY,
          { mode: 0, flags: 4, target: worker, executionGas: workerGas, stateGas: FRESH },
          { mode: 0, flags: 4, target: funded, executionGas: 2_599n },
          { mode: 0, flags: 0, target: worker, executionGas: workerGas },
        ],
      });
      // The second frame halts on its entry charge: the batch unrolls (the first frame's write and
      // its state gas undone) and the frame after it is skipped.
      expect(executed.frames.slice(1).map(({ status, executionGas, stateGas }) => [status, executionGas, stateGas])).to.deep.equal([
        [1, workerGas, 0n],
        [0, 2_599n, 0n],
        [2, 0n, 0n],
      ]);
      expect(await runner.slot(worker, 1)).to.equal(0n);
    });

    it('test_precompile_target_rejecting_its_input', async () => {
      const { executed } = await send(account('bn254 rejects'), {
        signatures: [{ scheme: 1 }],
        frames: [VERIFY, { mode: 0, flags: 0, target: BN254_ADD, executionGas: FRAME_GAS, data: `0x${'ff'.repeat(128)}` }],
      });
      expect(executed.frames[1]).to.deep.include({ status: 0, executionGas: FRAME_GAS });
    });

    for (const [name, stateGas, status] of [
      ['affordable', NEW_ACCOUNT_STATE_GAS, 1],
      ['unaffordable', NEW_ACCOUNT_STATE_GAS - 1n, 0],
    ] as const) {
      it(`test_dead_target_entry_charge[${name}]`, async () => {
        const dead = `0x${'00'.repeat(17)}de${name === 'affordable' ? 'a1' : 'a2'}00`;
        const { executed } = await send(account(`dead ${name}`), {
          signatures: [{ scheme: 1 }],
          frames: [VERIFY, { mode: 2, flags: 0, target: dead, executionGas: FRAME_GAS, value: 10n ** 15n, stateGas }],
        });
        const frame = executed.frames[1]!;
        if (status === 1) {
          expect(frame).to.deep.include({ status: 1, executionGas: 2_600n, stateGas: NEW_ACCOUNT_STATE_GAS });
          expect(await runner.balance(dead)).to.equal(10n ** 15n);
        } else {
          expect(frame).to.deep.include({ status: 0, executionGas: FRAME_GAS, stateGas: 0n, logs: [] });
          expect(await runner.balance(dead)).to.equal(0n);
          expect(await runner.el('eth_getTransactionCount', [dead, 'latest'])).to.equal('0x0');
        }
      });
    }

    /** An EOA delegated (EIP-7702) to `delegate`: its code is the designation. */
    const authority = async (label: string, delegate: string) => {
      const address = account(`authority ${label}`).address.toLowerCase();
      await runner.el('anvil_setCode', [address, `0xef0100${delegate.slice(2)}`]);
      return address;
    };

    // EIP-2780 in the EVM: entering a delegated target also charges its delegate's access.
    for (const [name, warmFirst, entry] of [
      ['cold_delegate', false, 2_600n + 2_600n],
      ['warm_delegate', true, 2_600n + 100n],
    ] as const) {
      it(`test_delegated_target_entry_charge[${name}]`, async () => {
        const delegate = await runner.contract('0x00');
        const target = await authority(name, delegate);
        const warming: FrameFields[] = warmFirst ? [{ mode: 0, flags: 0, target: delegate, executionGas: FRAME_GAS }] : [];
        const { executed } = await send(account(`delegated ${name}`), {
          signatures: [{ scheme: 1 }],
          frames: [VERIFY, ...warming, { mode: 0, flags: 0, target, executionGas: FRAME_GAS }],
        });
        if (warmFirst) expect(executed.frames[1]).to.deep.include({ status: 1, executionGas: 2_600n });
        expect(executed.frames.at(-1)).to.deep.include({ status: 1, executionGas: entry });
      });
    }

    it('test_delegated_to_precompile_target', async () => {
      const target = await authority('to identity', IDENTITY);
      const { executed } = await send(account('delegated to identity'), {
        signatures: [{ scheme: 1 }],
        frames: [VERIFY, { mode: 0, flags: 0, target, executionGas: FRAME_GAS, data: `0x${'01'.repeat(32)}` }],
      });
      // The precompile is warm (100) and is not run: a delegation to it is code-less.
      expect(executed.frames[1]).to.deep.include({ status: 1, executionGas: 2_600n + 100n });
    });

    it('test_verify_frame_delegated_to_precompile_target', async () => {
      const target = await authority('verify to identity', IDENTITY);
      const { executed } = await send(account('verify delegated to identity'), {
        signatures: [{ scheme: 1 }],
        frames: [VERIFY, { mode: 1, flags: 0, target, executionGas: FRAME_GAS }],
      });
      // The delegation is followed, not default code: the frame succeeds without approving.
      expect(executed.frames[1]).to.deep.include({ status: 1, executionGas: 2_600n + 100n });
    });

    for (const [name, limit, status] of [
      ['affordable', 2_600n, 1],
      ['one_gas_short', 2_599n, 0],
    ] as const) {
      it(`test_frame_entry_gas_boundary[${name}]`, async () => {
        const funded = `0x${'00'.repeat(17)}eb${name === 'affordable' ? '01' : '02'}00`;
        await runner.el('anvil_setBalance', [funded, '0x1']);
        const { executed } = await send(account(`entry ${name}`), {
          signatures: [{ scheme: 1 }],
          frames: [VERIFY, { mode: 0, flags: 0, target: funded, executionGas: limit }],
        });
        expect(executed.frames[1]).to.deep.include({ status, executionGas: limit });
      });
    }
  });
});
