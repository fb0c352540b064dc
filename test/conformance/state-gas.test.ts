/**
 * EEST `test_state_gas.py` (the 22,931-character revision), `test_refill_rollback_settlement.py`
 * (@75e1bba), the two state-gas cases of `test_introspection.py` (@0169e7c) and the receipt side
 * of `test_gas_settlement.py` (its header assertions are EIP-7778 block accounting), re-expressed
 * against the devnet's frame runner: EIP-8037 state gas inside the EVM, drawn from each frame's
 * own pool; a slot cleared by a later frame refills the receipt of the frame that created it,
 * and a failed frame or an unrolled batch undoes that refill.
 *
 * One worker contract per case, its action chosen by the first byte of the frame's data; probes
 * store what FRAMEPARAM and TXPARAM answer. EEST's default frame state budget
 * (`DEFAULT_FRAME_STATE_GAS_LIMIT`) is not in the stored framework; `BUDGET` covers the three
 * fresh writes the largest case makes. The two APPROVE cases of test_state_gas are in
 * admission.test.ts.
 */
import { expect } from 'chai';
import { id, Wallet } from 'ethers';
import { decodeFrameTransaction, frameGas } from '../../protocol/index.js';
import { secp256k1Entry, signed, type FrameFields, type FrameTxFields } from '../../support/frames.js';
import { REVERTS } from '../../support/verify-code.js';
import { FRESH } from './eest.js';
import { useRunner } from './runner.js';

const FUNDS = 10n ** 18n;
const FEES: [bigint, bigint, bigint] = [1_000_000_000n, 3_000_000_000n, 0n];
const VERIFY: FrameFields = { mode: 1, flags: 3, executionGas: 100_000n };
const WORKER_GAS = 100_000n;
const BUDGET = 400_000n;
const ATOMIC = 4;

interface Band {
  readonly pre: bigint;
  readonly post: bigint;
  readonly floor: bigint;
}

const push = (value: bigint) => `7f${value.toString(16).padStart(64, '0')}`;
const sstore = (slot: number, value: string) => `${value}${push(BigInt(slot))}55`;
const lit = (value: bigint) => push(value);
const plus1 = (value: string) => `${value}${push(1n)}01`;
const frameparam = (frame: number, param: number) => `${push(BigInt(param))}${push(BigInt(frame))}b3`;
const txparam = (param: number) => `${push(BigInt(param))}b0`;
const REVERT = '5f5ffd';
const STATE_GAS_USED = 0x0b;
const STATE_GAS_LEFT = 0x0c;
const STATUS = 0x05;

/** Code running `actions[k - 1]` when the frame's data starts with byte k, then STOP. */
function worker(...actions: string[]): string {
  // PUSH0 CALLDATALOAD PUSH1 0xf8 SHR, then per action: DUP1 PUSH1 k EQ PUSH2 <at> JUMPI.
  const dispatchLength = 5 + actions.length * 8 + 1;
  let at = dispatchLength;
  let dispatch = '5f3560f81c';
  let bodies = '';
  actions.forEach((action, i) => {
    dispatch += `8060${(i + 1).toString(16).padStart(2, '0')}1461${at.toString(16).padStart(4, '0')}57`;
    const body = `5b${action}00`;
    bodies += body;
    at += body.length / 2;
  });
  return `0x${dispatch}00${bodies}`;
}
const data = (action: number) => `0x${action.toString(16).padStart(2, '0')}`;
const at = (target: string, action: number, extra: Partial<FrameFields> = {}): FrameFields => ({
  mode: 0,
  flags: 0,
  target,
  executionGas: WORKER_GAS,
  stateGas: BUDGET,
  data: data(action),
  ...extra,
});
const probe = (target: string): FrameFields => ({ mode: 0, flags: 0, target, executionGas: WORKER_GAS, stateGas: BUDGET });

describe('conformance: EEST state gas (EIP-8141 with EIP-8037), against the devnet frame runner', () => {
  const runner = useRunner();
  let senders = 0;

  async function run(frames: FrameFields[], from = new Wallet(id(`conformance state gas ${senders++}`))) {
    await runner.el('anvil_setBalance', [from.address.toLowerCase(), `0x${FUNDS.toString(16)}`]);
    const tx: FrameTxFields = { sender: from.address.toLowerCase(), fees: FEES, signatures: [{ scheme: 1 }], frames: [VERIFY, ...frames] };
    const raw = signed(tx, [(digest) => secp256k1Entry(from.privateKey, digest)]);
    const executed = await runner.run(raw);
    return { executed, tx: decodeFrameTransaction(raw) };
  }
  const receipts = (frames: ReadonlyArray<{ status: number; stateGas: bigint }>) => frames.slice(1).map((f) => [f.status, f.stateGas]);
  /** EEST's settlement check: intrinsic plus every receipt, no refund surviving. */
  const settledWithoutRefund = (executed: Awaited<ReturnType<typeof run>>['executed'], tx: Awaited<ReturnType<typeof run>>['tx']) =>
    expect(executed.gasUsed).to.equal(executed.frames.reduce((sum, f) => sum + f.executionGas + f.stateGas, frameGas(tx).intrinsic));

  describe('test_state_gas', () => {
    it('test_same_frame_refill', async () => {
      const w = await runner.contract(worker(sstore(1, lit(1n)) + sstore(1, lit(0n)) + sstore(4, txparam(STATE_GAS_LEFT))));
      const { executed } = await run([at(w, 1)]);
      // The refill returns to the frame's own pool: only slot 4 stays charged.
      expect(receipts(executed.frames)).to.deep.equal([[1, FRESH]]);
      expect(await runner.slot(w, 1)).to.equal(0n);
      expect(await runner.slot(w, 4)).to.equal(BUDGET);
    });

    it('test_cross_frame_refill', async () => {
      const w = await runner.contract(
        worker(
          sstore(1, lit(1n)),
          sstore(2, frameparam(1, STATE_GAS_USED)) +
            sstore(1, lit(0n)) +
            sstore(3, plus1(frameparam(1, STATE_GAS_USED))) +
            sstore(4, txparam(STATE_GAS_LEFT)),
        ),
      );
      const { executed } = await run([at(w, 1), at(w, 2)]);
      // The clear refills frame 1's receipt, not frame 2's pool: frame 2 keeps its three writes.
      expect(receipts(executed.frames)).to.deep.equal([
        [1, 0n],
        [1, 3n * FRESH],
      ]);
      expect(await runner.slot(w, 2)).to.equal(FRESH);
      expect(await runner.slot(w, 3)).to.equal(1n);
      expect(await runner.slot(w, 4)).to.equal(BUDGET - 2n * FRESH);
    });

    for (const [name, stateGas] of [
      ['exact_budget', FRESH],
      ['one_below', FRESH - 1n],
    ] as const) {
      it(`test_state_gas_exhaustion[${name}]`, async () => {
        const w = await runner.contract(worker(sstore(1, lit(1n))));
        const { executed } = await run([at(w, 1, { stateGas })]);
        const frame = executed.frames[1]!;
        if (name === 'exact_budget') {
          expect(frame).to.deep.include({ status: 1, stateGas: FRESH });
          expect(await runner.slot(w, 1)).to.equal(1n);
        } else {
          // The charge halts the frame: all its execution gas, no state gas, nothing stored; the transaction stays valid.
          expect(frame).to.deep.include({ status: 0, executionGas: WORKER_GAS, stateGas: 0n });
          expect(await runner.slot(w, 1)).to.equal(0n);
        }
      });
    }

    it('test_refill_after_intermediate_modification', async () => {
      const w = await runner.contract(
        worker(sstore(1, lit(1n)), sstore(1, lit(2n)), sstore(1, lit(0n)) + sstore(3, plus1(frameparam(1, STATE_GAS_USED)))),
      );
      const { executed } = await run([at(w, 1), at(w, 2), at(w, 3)]);
      expect(receipts(executed.frames)).to.deep.equal([
        [1, 0n],
        [1, 0n],
        [1, FRESH],
      ]);
      expect(await runner.slot(w, 1)).to.equal(0n);
      expect(await runner.slot(w, 3)).to.equal(1n);
    });

    const probeCode = (refilling: number, failed: number) =>
      worker(
        sstore(6, frameparam(1, STATE_GAS_USED)) +
          sstore(7, plus1(frameparam(refilling, STATE_GAS_USED))) +
          sstore(8, plus1(frameparam(failed, STATUS))),
      );

    it('test_batch_unroll_restores_refilled_receipt', async () => {
      const w = await runner.contract(worker(sstore(1, lit(1n)), sstore(1, lit(2n)), sstore(1, lit(0n)), REVERT));
      const p = await runner.contract(probeCode(3, 4));
      const { executed } = await run([at(w, 1), at(w, 2), at(w, 3, { flags: ATOMIC }), at(w, 4), { ...probe(p), data: data(1) }]);
      expect(receipts(executed.frames)).to.deep.equal([
        [1, FRESH],
        [1, 0n],
        [1, 0n],
        [0, 0n],
        [1, 3n * FRESH],
      ]);
      expect(await runner.slot(w, 1)).to.equal(2n);
      expect([await runner.slot(p, 6), await runner.slot(p, 7), await runner.slot(p, 8)]).to.deep.equal([FRESH, 1n, 1n]);
    });

    it('test_frame_revert_restores_refilled_receipt', async () => {
      const w = await runner.contract(worker(sstore(1, lit(1n)), sstore(1, lit(0n)) + REVERT));
      const p = await runner.contract(probeCode(2, 2));
      const { executed } = await run([at(w, 1), at(w, 2), { ...probe(p), data: data(1) }]);
      expect(receipts(executed.frames)).to.deep.equal([
        [1, FRESH],
        [0, 0n],
        [1, 3n * FRESH],
      ]);
      expect(await runner.slot(w, 1)).to.equal(1n);
      expect([await runner.slot(p, 6), await runner.slot(p, 7), await runner.slot(p, 8)]).to.deep.equal([FRESH, 1n, 1n]);
    });
  });

  describe('test_state_gas (bogota)', () => {
    /** MSTORE8(0, action), then CALL(GAS, ADDRESS, 0, 0, 1, 0, 0) dropping its result: the worker calls itself. */
    const callSelf = (action: number) => `60${action.toString(16).padStart(2, '0')}5f535f5f60015f5f305af150`;

    it('calls itself with the action named (what the two tests below rest on)', async () => {
      const w = await runner.contract(worker(sstore(8, lit(1n)), callSelf(1)));
      await run([at(w, 2)]);
      expect(await runner.slot(w, 8)).to.equal(1n);
    });

    it('test_call_revert_restores_refilled_receipt', async () => {
      const w = await runner.contract(worker(sstore(1, lit(1n)), callSelf(3) + sstore(9, lit(1n)), sstore(1, lit(0n)) + REVERT));
      const { executed } = await run([at(w, 1), at(w, 2, { stateGas: FRESH })]);
      // The inner call's clear refilled frame 1's receipt, and its revert took the refill back: frame
      // 1 keeps its charge, and frame 2's one fresh write is all its pool must cover.
      expect(receipts(executed.frames)).to.deep.equal([
        [1, FRESH],
        [1, FRESH],
      ]);
      expect([await runner.slot(w, 1), await runner.slot(w, 9)]).to.deep.equal([1n, 1n]);
    });

    for (const [name, reverting, expected] of [
      ['reverted_call', [5], [[1, 0n]]],
      ['reverted_frame', [3], [[0, 0n]]],
      [
        'unrolled_batch',
        [4, 'reverter'],
        [
          [1, 0n],
          [0, 0n],
        ],
      ],
    ] as const) {
      it(`test_reversion_restores_charge_ownership[${name}]`, async () => {
        // 1 sets slot 1; 2 clears it for good, then sets slot 9; 3 clears and reverts; 4 clears;
        // 5 calls itself with 3.
        const w = await runner.contract(
          worker(sstore(1, lit(1n)), sstore(1, lit(0n)) + sstore(9, lit(1n)), sstore(1, lit(0n)) + REVERT, sstore(1, lit(0n)), callSelf(3)),
        );
        const reverter = await runner.contract(REVERTS);
        const middle = reverting.map(
          (step, i): FrameFields =>
            step === 'reverter'
              ? { mode: 0, flags: 0, target: reverter, executionGas: WORKER_GAS }
              : at(w, step, { stateGas: 0n, ...(i < reverting.length - 1 ? { flags: ATOMIC } : {}) }),
        );
        const { executed } = await run([at(w, 1), ...middle, at(w, 2, { stateGas: FRESH })]);
        // The reverted clear's claim on frame 1's charge came back with it: the final clear refills
        // frame 1, so frame 2's one fresh write (slot 9) fits its pool of exactly that.
        expect(receipts(executed.frames)).to.deep.equal([[1, 0n], ...expected, [1, FRESH]]);
        expect([await runner.slot(w, 1), await runner.slot(w, 9)]).to.deep.equal([0n, 1n]);
      });
    }
  });

  describe('APPROVE creating the sender, in a frame that already spent state gas', () => {
    // A sponsor's code that sets a slot (97,920 state gas), then approves payment for a sender
    // that does not exist yet (183,600 more): the charge is drawn from what is left of the pool.
    const SPONSOR = `0x6001600155${'6001'}5f5faa`;
    const sponsoredBy = async (label: string, stateGas: bigint) => {
      const sponsor = await runner.contract(SPONSOR);
      await runner.el('anvil_setBalance', [sponsor, `0x${FUNDS.toString(16)}`]);
      const from = new Wallet(id(`conformance approve after spending ${label}`));
      const tx: FrameTxFields = {
        sender: from.address.toLowerCase(),
        fees: FEES,
        signatures: [{ scheme: 1 }],
        frames: [
          { mode: 1, flags: 2, executionGas: 100_000n },
          { mode: 0, flags: 1, target: sponsor, executionGas: 100_000n, stateGas },
        ],
      };
      return { raw: signed(tx, [(digest) => secp256k1Entry(from.privateKey, digest)]), sponsor, sender: from.address };
    };

    it('pays when what is left covers the creation exactly', async () => {
      const { raw, sponsor, sender } = await sponsoredBy('exact', FRESH + 183_600n);
      const executed = await runner.run(raw);
      expect(executed.payer).to.equal(sponsor);
      expect(executed.frames[1]).to.deep.include({ status: 1, stateGas: FRESH + 183_600n });
      expect(await runner.nonce(sender)).to.equal(1n);
    });

    it('halts one short: no frame approved payment, and the chain leaves the transaction out', async () => {
      const { raw } = await sponsoredBy('one short', FRESH + 183_600n - 1n);
      expect(await runner.leftOut(raw)).to.equal('no frame approved payment');
    });
  });

  describe('test_refill_rollback_settlement', () => {
    const settlementProbe = (failed: number) =>
      worker(sstore(6, frameparam(1, STATE_GAS_USED)) + sstore(8, plus1(frameparam(failed, STATUS))));

    it('test_batch_unroll_refill_restores_spent_gas', async () => {
      const w = await runner.contract(worker(sstore(1, lit(1n)), sstore(1, lit(0n)), REVERT));
      const p = await runner.contract(settlementProbe(3));
      const { executed, tx } = await run([at(w, 1), at(w, 2, { flags: ATOMIC }), at(w, 3), { ...probe(p), data: data(1) }]);
      expect(receipts(executed.frames)).to.deep.equal([
        [1, FRESH],
        [1, 0n],
        [0, 0n],
        [1, 2n * FRESH],
      ]);
      expect(await runner.slot(w, 1)).to.equal(1n);
      expect([await runner.slot(p, 6), await runner.slot(p, 8)]).to.deep.equal([FRESH, 1n]);
      settledWithoutRefund(executed, tx);
    });

    it('test_frame_revert_refill_restores_spent_gas', async () => {
      const w = await runner.contract(worker(sstore(1, lit(1n)), sstore(1, lit(0n)) + REVERT));
      const p = await runner.contract(settlementProbe(2));
      const { executed, tx } = await run([at(w, 1), at(w, 2), { ...probe(p), data: data(1) }]);
      expect(receipts(executed.frames)).to.deep.equal([
        [1, FRESH],
        [0, 0n],
        [1, 2n * FRESH],
      ]);
      expect(await runner.slot(w, 1)).to.equal(1n);
      expect([await runner.slot(p, 6), await runner.slot(p, 8)]).to.deep.equal([FRESH, 1n]);
      settledWithoutRefund(executed, tx);
    });
  });

  describe('test_gas_settlement (the receipt side)', () => {
    for (const [name, writes] of [
      ['with_state_write', true],
      ['no_state_write', false],
    ] as const) {
      it(`test_calldata_floor_with_state_gas[${name}]`, async () => {
        const w = await runner.contract(writes ? '0x600160015500' : '0x00');
        const { executed, tx } = await run([
          { mode: 0, flags: 0, target: w, executionGas: 30_000n, stateGas: writes ? FRESH : 0n, data: `0x${'00'.repeat(30_000)}` },
        ]);
        const gas = frameGas(tx);
        const stateUsed = writes ? FRESH : 0n;
        const executionUsed = executed.frames.reduce((sum, f) => sum + f.executionGas, gas.intrinsic);
        expect(gas.calldataFloor > executionUsed, 'the premise: the floor binds').to.equal(true);
        // State gas rides on top of the floor, never under it.
        expect(executed.gasUsed).to.equal(gas.calldataFloor + stateUsed);
        expect(await runner.slot(w, 1)).to.equal(writes ? 1n : 0n);
      });
    }

    describe('test_storage_refund_settlement', () => {
      /** 400 warm BALANCE(sender) reads, then clearing the pre-set slot 1 (the EIP-3529 refund). */
      const refunder = async (sender: string) => {
        const w = await runner.contract(`0x${`73${sender.slice(2)}3150`.repeat(400)}5f60015500`);
        await runner.el('anvil_setStorageAt', [w, `0x${'1'.padStart(64, '0')}`, `0x${'1'.padStart(64, '0')}`]);
        return w;
      };
      const FRAME_GAS = 100_000n;
      /** The two frames' execution: the sender's warm entry; the worker's cold entry, 400 × (PUSH20, BALANCE, POP), PUSH0, PUSH1, a cold SSTORE 1→0. */
      const EXECUTION = 100n + 2_600n + 400n * (3n + 100n + 2n) + 2n + 3n + 2_100n + 2_900n;
      const fields = (from: Wallet, w: string, zeros: number): FrameTxFields => ({
        sender: from.address.toLowerCase(),
        fees: FEES,
        signatures: [{ scheme: 1 }],
        frames: [VERIFY, { mode: 0, flags: 0, target: w, executionGas: FRAME_GAS, data: `0x${'00'.repeat(zeros)}` }],
      });
      const bandOf = (tx: ReturnType<typeof decodeFrameTransaction>, execution: bigint): Band => {
        const gas = frameGas(tx);
        const pre = gas.intrinsic + execution;
        const refund = 4_800n < pre / 5n ? 4_800n : pre / 5n;
        return { pre, post: pre - refund, floor: gas.calldataFloor };
      };
      // Frame 1's data grown in EEST's 16-zero-byte steps until the floor lands in the band.
      for (const [band, holds] of [
        ['post_refund_above_floor', (r: Band) => r.post > r.floor],
        ['floor_between_pre_and_post_refund', (r: Band) => r.post < r.floor && r.floor < r.pre],
        ['floor_above_pre_refund', (r: Band) => r.floor > r.pre],
      ] as const) {
        it(`test_storage_refund_settlement[${band}]`, async () => {
          const from = new Wallet(id(`conformance refund settlement ${band}`));
          const w = await refunder(from.address.toLowerCase());
          const sign = (zeros: number) => signed(fields(from, w, zeros), [(digest) => secp256k1Entry(from.privateKey, digest)]);
          let zeros = 0;
          while (!holds(bandOf(decodeFrameTransaction(sign(zeros)), EXECUTION))) zeros += 16;
          const { executed, tx } = await run(fields(from, w, zeros).frames.slice(1), from);
          const result = bandOf(
            tx,
            executed.frames.reduce((sum, f) => sum + f.executionGas, 0n),
          );
          expect(holds(result), `the premise of ${band}: pre ${result.pre}, post ${result.post}, floor ${result.floor}`).to.equal(true);
          expect(executed.frames[1]).to.deep.include({ status: 1, executionGas: EXECUTION - 100n, stateGas: 0n });
          expect(executed.gasUsed).to.equal(result.post > result.floor ? result.post : result.floor);
        });
      }
    });
  });

  describe('test_introspection (the state-gas reads)', () => {
    it('test_txparam_state_gas_left', async () => {
      const p = await runner.contract(worker(sstore(1, txparam(STATE_GAS_LEFT)) + sstore(2, txparam(STATE_GAS_LEFT))));
      await run([at(p, 1, { stateGas: 200_000n })]);
      expect([await runner.slot(p, 1), await runner.slot(p, 2)]).to.deep.equal([200_000n, 200_000n - FRESH]);
    });

    it('test_frameparam_gas_used', async () => {
      const w = await runner.contract('0x600160015500');
      const p = await runner.contract(worker(sstore(1, frameparam(1, 0x0a)) + sstore(2, frameparam(1, STATE_GAS_USED))));
      const { executed } = await run([{ ...probe(w) }, { ...probe(p), data: data(1) }]);
      // The worker: cold entry, two PUSH1 and a cold SSTORE from zero (EIP-8037 leaves its 20,000 execution gas).
      expect(executed.frames[1]).to.deep.include({ status: 1, executionGas: 2_600n + 3n + 3n + 22_100n, stateGas: FRESH });
      expect([await runner.slot(p, 1), await runner.slot(p, 2)]).to.deep.equal([2_600n + 3n + 3n + 22_100n, FRESH]);
    });
  });
});
