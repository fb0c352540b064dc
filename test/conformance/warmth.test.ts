/**
 * EEST `test_warmth.py` (ethereum/execution-specs @12add237), re-expressed against the devnet's
 * frame runner: which accounts are warm (EIP-2929) for a frame, measured by a probe frame that
 * stores what one BALANCE cost it (100 warm, 2,600 cold), and the receipts' execution gas where
 * EEST pins it. The sender's VERIFY frame reports the pin's 100 (its warm entry) where this EEST
 * revision has 0 (test/conformance/INVENTORY.md §4.1).
 */
import { expect } from 'chai';
import { id, Wallet } from 'ethers';
import { secp256k1Entry, signed, type FrameFields, type FrameTxFields } from '../../support/frames.js';
import { useRunner } from './runner.js';

const FUNDS = 10n ** 18n;
const FEES: [bigint, bigint, bigint] = [1_000_000_000n, 3_000_000_000n, 0n];
const TOUCH_GAS = 200_000n;
const COINBASE = '0x00000000000000000000000000000000c0ffee00';
/** The account whose warmth the probes measure. */
const SUBJECT = '0x00000000000000000000000000000000005b1ec7';

const push20 = (address: string) => `73${address.slice(2)}`;
/** Stores at slot 0 what one BALANCE of `subject` (its code: 20-byte push, or ORIGIN) cost. */
const probe = (subject: string) => `0x5a${subject}3150${'5a'}9003${'6007'}9003${'5f55'}00`;
/** BALANCE of `subject` (code that pushes it), then `end` (00 STOP, 5f5ffd REVERT, fe INVALID). */
const toucher = (subject: string, end: string) => `0x${subject}3150${end}`;
const STOP = '00';
const REVERT = '5f5ffd';
const INVALID = 'fe';
/** Halts (INVALID) on empty calldata, STOPs otherwise: 18 gas on that path. */
const HALTS_ON_EMPTY = '0x361560065700' + '5bfe';
/** CALL(GAS, child, 0, 0, 0, 0, 0), POP, then `end`. */
const caller = (child: string, end: string) => `0x5f5f5f5f5f${push20(child)}5af150${end}`;

interface Case {
  readonly id: string;
  /** Contracts by name, placed at fresh addresses before the frames are built. */
  readonly code?: Readonly<Record<string, string | ((at: Record<string, string>, sender: string) => string)>>;
  readonly frames: (at: Record<string, string>, sender: string) => FrameFields[];
  /** BALANCE's cost as the probe stored it, if the case has one. */
  readonly measured?: bigint;
  /** Each frame's [status, execution gas] (gas undefined: not pinned by EEST). */
  readonly receipts: ReadonlyArray<readonly [number, bigint | undefined]>;
  readonly sponsored?: boolean;
}

const VERIFY: FrameFields = { mode: 1, flags: 3, executionGas: 10_000n };
const frame = (target: string, extra: Partial<FrameFields> = {}): FrameFields => ({
  mode: 0,
  flags: 0,
  target,
  executionGas: TOUCH_GAS,
  ...extra,
});
const PROBE_GAS = 500_000n;
/** EEST's probe budget: its fresh SSTORE draws 97,920 of it (EIP-8037). */
const PROBE_STATE_GAS = 100_000n;
const probeFrame = (target: string): FrameFields => ({ mode: 0, flags: 0, target, executionGas: PROBE_GAS, stateGas: PROBE_STATE_GAS });
/** The probe's own cost: GAS, PUSH20, BALANCE, POP, GAS, SWAP1, SUB, PUSH1, SWAP1, SUB, PUSH0 and a fresh SSTORE. */
const probeCost = (balance: bigint) => 2n + 3n + balance + 2n + 2n + 3n + 3n + 3n + 3n + 3n + 2n + 22_100n;

const CASES: Case[] = [
  {
    id: 'test_sender_is_warm',
    code: { probe: (_at, sender) => probe(push20(sender)) },
    frames: (at) => [VERIFY, probeFrame(at.probe!)],
    measured: 100n,
    receipts: [
      [1, 100n],
      [1, 2_600n + probeCost(100n)],
    ],
  },
  {
    id: 'test_coinbase_is_warm',
    code: { probe: probe(push20(COINBASE)) },
    frames: (at) => [VERIFY, probeFrame(at.probe!)],
    measured: 100n,
    receipts: [
      [1, 100n],
      [1, 2_600n + probeCost(100n)],
    ],
  },
  {
    id: 'test_frame_target_entry_charge[success_carries_target_warmth]',
    code: { target: `0x${STOP}` },
    frames: (at) => [VERIFY, frame(at.target!), frame(at.target!)],
    receipts: [
      [1, 100n],
      [1, 2_600n],
      [1, 100n],
    ],
  },
  {
    id: 'test_frame_target_entry_charge[revert_discards_target_warmth]',
    code: { target: `0x${REVERT}` },
    frames: (at) => [VERIFY, frame(at.target!), frame(at.target!)],
    receipts: [
      [1, 100n],
      [0, 2_604n],
      [0, 2_604n],
    ],
  },
  {
    id: 'test_frame_target_entry_charge[halt_discards_target_warmth]',
    code: { target: HALTS_ON_EMPTY },
    frames: (at) => [VERIFY, frame(at.target!), frame(at.target!, { data: '0x01' })],
    receipts: [
      [1, 100n],
      [0, TOUCH_GAS],
      [1, 2_600n + 18n],
    ],
  },
  // The warmer: PUSH20, a cold BALANCE and POP (2,605), then STOP, REVERT (4 more) or INVALID (all its gas).
  ...(
    [
      ['success_carries', STOP, [1, 2_600n + 2_605n], 100n],
      ['revert_discards', REVERT, [0, 2_600n + 2_609n], 2_600n],
      ['halt_discards', INVALID, [0, TOUCH_GAS], 2_600n],
    ] as const
  ).map(
    ([name, end, warmer, measured]): Case => ({
      id: `test_warmth_carry_to_next_frame[${name}]`,
      code: { warmer: toucher(push20(SUBJECT), end), probe: probe(push20(SUBJECT)) },
      frames: (at) => [VERIFY, frame(at.warmer!), probeFrame(at.probe!)],
      measured,
      receipts: [[1, 100n], warmer, [1, 2_600n + probeCost(measured)]],
    }),
  ),
  {
    id: 'test_payer_warm_after_default_code_payment_approval',
    sponsored: true,
    code: { probe: (at) => probe(push20(at.payer!)) },
    frames: (at) => [
      { mode: 1, flags: 2, executionGas: 10_000n },
      { mode: 1, flags: 1, target: at.payer!, executionGas: 10_000n },
      probeFrame(at.probe!),
    ],
    measured: 100n,
    receipts: [
      [1, 100n],
      [1, 2_600n],
      [1, 2_600n + probeCost(100n)],
    ],
  },
  ...(
    [
      ['default_frame_origin_cold', 0, 0, 2_600n],
      ['verify_frame_origin_cold', 1, 0, 2_600n],
      ['sender_frame_origin_warm', 2, 0, 100n],
    ] as const
  ).map(
    ([name, mode, flags, balance]): Case => ({
      id: `test_origin_warmth_by_frame_mode[${name}]`,
      code: { prober: toucher('32', STOP) },
      frames: (at) => [VERIFY, { mode, flags, target: at.prober!, executionGas: TOUCH_GAS }],
      receipts: [
        [1, 100n],
        [1, 2_600n + 2n + balance + 2n],
      ],
    }),
  ),
  ...(
    [
      ['child_and_frame_succeed', STOP, STOP, 1, 100n],
      ['child_reverts', REVERT, STOP, 1, 2_600n],
      ['child_halts', INVALID, STOP, 1, 2_600n],
      ['frame_reverts', STOP, REVERT, 0, 2_600n],
      ['frame_halts', STOP, INVALID, 0, 2_600n],
    ] as const
  ).map(
    ([name, childEnd, outerEnd, status, measured]): Case => ({
      id: `test_warmth_from_inner_call[${name}]`,
      code: {
        child: toucher(push20(SUBJECT), childEnd),
        outer: (at) => caller(at.child!, outerEnd),
        probe: probe(push20(SUBJECT)),
      },
      frames: (at) => [VERIFY, frame(at.outer!), probeFrame(at.probe!)],
      measured,
      receipts: [
        [1, 100n],
        [status, name === 'frame_halts' ? TOUCH_GAS : undefined],
        [1, 2_600n + probeCost(measured)],
      ],
    }),
  ),
];
describe('conformance: EEST test_warmth (EIP-8141), against the devnet frame runner', () => {
  const runner = useRunner();
  const payer = new Wallet(id('conformance warmth payer'));
  before(async () => {
    await runner.el('anvil_setCoinbase', [COINBASE]);
    await runner.el('anvil_setBalance', [payer.address.toLowerCase(), `0x${FUNDS.toString(16)}`]);
  });

  for (const c of CASES) {
    it(c.id, async () => {
      const sender = new Wallet(id(`conformance warmth ${c.id}`));
      const address = sender.address.toLowerCase();
      await runner.el('anvil_setBalance', [address, `0x${FUNDS.toString(16)}`]);
      const at: Record<string, string> = { payer: payer.address.toLowerCase() };
      // Addresses first (a contract's code may name another's), then the code.
      for (const name of Object.keys(c.code ?? {})) at[name] = await runner.contract('0x');
      for (const [name, code] of Object.entries(c.code ?? {})) {
        await runner.el('anvil_setCode', [at[name], typeof code === 'function' ? code(at, address) : code]);
      }
      const fields: FrameTxFields = {
        sender: address,
        fees: FEES,
        frames: c.frames(at, address),
        signatures: c.sponsored === true ? [{ scheme: 1 }, { scheme: 1, signer: at.payer }] : [{ scheme: 1 }],
      };
      const raw = signed(fields, [
        (digest) => secp256k1Entry(sender.privateKey, digest),
        (digest) => secp256k1Entry(payer.privateKey, digest),
      ]);
      const executed = await runner.run(raw);
      expect(executed.frames.map((f, i) => [f.status, c.receipts[i]?.[1] === undefined ? undefined : f.executionGas])).to.deep.equal(
        c.receipts.map(([status, gas]) => [status, gas]),
      );
      if (c.measured !== undefined) {
        expect(await runner.slot(at.probe!, 0)).to.equal(c.measured);
      }
    });
  }
});
