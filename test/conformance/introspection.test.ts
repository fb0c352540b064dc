/**
 * EEST `test_introspection.py` (ethereum/execution-specs @0169e7c), re-expressed against the
 * frame runner (protocol/evm, driven by the devnet's FrameChain over anvil): a probe contract, run as
 * the transaction's DEFAULT frame 1, reads what the frame opcodes answer and stores it; the case
 * checks the stored words, or, where the read must halt, that the frame failed and stored nothing
 * (the probe writes 0xff first) while the transaction stays valid.
 *
 * Opcodes and parameters are the pin's (TXPARAM 0xb0, FRAMEDATALOAD 0xb1, FRAMEDATACOPY 0xb2,
 * FRAMEPARAM 0xb3, SIGPARAM 0xb4, SIGDATACOPY 0xb5). The two cases that read EIP-8037 state gas
 * after a storage write are in state-gas.test.ts.
 */
import { expect } from 'chai';
import { id, Wallet } from 'ethers';
import { secp256k1Entry, signed, type EntryFields, type FrameFields, type FrameTxFields } from '../../support/frames.js';
import { useRunner } from './runner.js';

const FUNDS = 10n ** 18n;
const MAX_FEE = 1_000_000_000n;
const PRIORITY_FEE = 7n;
/** Frame 1's data: the bytes 0x01..0x28. */
const DATA = `0x${Array.from({ length: 40 }, (_, i) => (i + 1).toString(16).padStart(2, '0')).join('')}`;
const VERIFY_GAS = 100_000n;

const hex32 = (value: bigint) => value.toString(16).padStart(64, '0');
const push = (value: bigint) => `7f${hex32(value)}`;
const op = {
  txparam: (param: number) => `${push(BigInt(param))}b0`,
  frameparam: (frame: number, param: number) => `${push(BigInt(param))}${push(BigInt(frame))}b3`,
  sigparam: (entry: number, param: number) => `${push(BigInt(param))}${push(BigInt(entry))}b4`,
  framedataload: (frame: number, offset: number) => `${push(BigInt(frame))}${push(BigInt(offset))}b1`,
  /** Copies `length` bytes at `offset` of a frame's data (0xb2) or an entry's signature (0xb5) to memory 0, and loads the word there. */
  copy: (opcode: 'b2' | 'b5', index: number, offset: number, length: number) =>
    `${push(BigInt(index))}${push(BigInt(length))}${push(BigInt(offset))}${push(0n)}${opcode}${push(0n)}51`,
  balance: '31',
  eq: '14',
  sub: '03',
  iszero: '15',
  swap1: '90',
};
/** Stores the value on the stack at `slot`. */
const store = (slot: number) => `${push(BigInt(slot))}55`;
/** A probe: each read stored at slots 1, 2, …, then STOP. */
const probeOf = (...reads: string[]) => `0x${reads.map((read, i) => `${read}${store(i + 1)}`).join('')}00`;
/** A probe that stores 0xff at slot 1, then makes a read that must halt. */
const haltingProbe = (read: string) => `0x${push(0xffn)}${store(1)}${read}${store(2)}00`;

interface Case {
  readonly id: string;
  readonly code: string;
  /** Slots 1, 2, … as read after the block; `halts`: frame 1 failed and slot 1 is still 0. */
  readonly expected: readonly bigint[] | 'halts' | ((sender: string, probe: string) => readonly bigint[]);
  readonly frames?: (probe: string) => FrameFields[];
  readonly signatures?: (sender: Wallet) => EntryFields[];
  /** Why the runner's verdict differs from EEST's, when it does. */
  readonly diverges?: string;
}

const probeFrame = (probe: string, extra: Partial<FrameFields> = {}): FrameFields => ({
  mode: 0,
  flags: 0,
  target: probe,
  executionGas: 500_000n,
  stateGas: 200_000n,
  data: DATA,
  ...extra,
});
const VERIFY: FrameFields = { mode: 1, flags: 3, executionGas: VERIFY_GAS };
const word = (hex: string) => BigInt(hex.padEnd(66, '0'));

const TXPARAM: Case[] = (
  [
    ['type', 0x00, 6n],
    ['nonce', 0x01, 0n],
    ['priority_fee', 0x03, PRIORITY_FEE],
    ['max_fee', 0x04, MAX_FEE],
    ['max_blob_fee', 0x05, 0n],
    ['blob_count', 0x07, 0n],
    ['frame_count', 0x09, 2n],
    ['frame_index', 0x0a, 1n],
    ['signature_count', 0x0b, 1n],
  ] as const
).map(([name, param, value]) => ({ id: `test_txparam[${name}]`, code: probeOf(op.txparam(param)), expected: [value] }));

const FRAMEPARAM: Case[] = (
  [
    ['mode', 0, 0x02, 1n],
    ['flags', 0, 0x03, 3n],
    ['allowed_scope', 0, 0x06, 3n],
    ['empty_data', 0, 0x04, 0n],
    ['gas_limit', 0, 0x01, VERIFY_GAS],
    ['state_gas_limit', 0, 0x09, 0n],
    ['atomic_batch', 0, 0x07, 0n],
    ['status_of_earlier_frame', 0, 0x05, 1n],
    ['data_length', 1, 0x04, 40n],
    ['value', 1, 0x08, 0n],
    ['own_gas_limit', 1, 0x01, 500_000n],
    ['own_state_gas_limit', 1, 0x09, 200_000n],
  ] as const
).map(([name, frame, param, value]) => ({ id: `test_frameparam[${name}]`, code: probeOf(op.frameparam(frame, param)), expected: [value] }));

const HALTS: Case[] = [
  ...(
    [
      ['status_of_current_frame', op.frameparam(1, 0x05)],
      ['execution_gas_used_of_current_frame', op.frameparam(1, 0x0a)],
      ['state_gas_used_of_current_frame', op.frameparam(1, 0x0b)],
      ['frame_index_out_of_bounds', op.frameparam(2, 0x02)],
      ['undefined_param', op.frameparam(0, 0x0c)],
    ] as const
  ).map(([name, read]): Case => ({ id: `test_frameparam_halts[${name}]`, code: haltingProbe(read), expected: 'halts' })),
  ...(
    [
      ['txparam_undefined_param', op.txparam(0x0d)],
      // bogota's revision probes 0x11: any parameter past 0x0c halts.
      ['txparam_undefined_param (0x11)', op.txparam(0x11)],
      ['sigparam_undefined_param', op.sigparam(0, 0x05)],
      // The copy selector of older revisions is no parameter: SIGDATACOPY copies.
      ['sigparam_undefined_copy_param', op.sigparam(0, 0x04)],
      ['sigdatacopy_signature_index_out_of_bounds', op.copy('b5', 1, 0, 32)],
      ['sigparam_signature_index_out_of_bounds', op.sigparam(1, 0x01)],
      ['framedataload_frame_index_out_of_bounds', op.framedataload(2, 0)],
      ['framedatacopy_frame_index_out_of_bounds', op.copy('b2', 2, 0, 32)],
    ] as const
  ).map(([name, read]): Case => ({ id: `test_introspection_halts[${name}]`, code: haltingProbe(read), expected: 'halts' })),
];

const DATA_READS: Case[] = [
  { id: 'test_framedataload[first_word]', code: probeOf(op.framedataload(1, 0)), expected: [word(DATA.slice(0, 66))] },
  { id: 'test_framedataload[tail_zero_padded]', code: probeOf(op.framedataload(1, 32)), expected: [word(`0x${DATA.slice(66)}`)] },
  { id: 'test_framedataload[past_the_end]', code: probeOf(op.framedataload(1, 64)), expected: [0n] },
  { id: 'test_framedataload[empty_frame_data]', code: probeOf(op.framedataload(0, 0)), expected: [0n] },
  {
    id: 'test_framedatacopy',
    code: probeOf(op.copy('b2', 1, 0, 32), op.copy('b2', 1, 32, 32)),
    expected: [word(DATA.slice(0, 66)), word(`0x${DATA.slice(66)}`)],
  },
];

const ARBITRARY_ENTRY = (): EntryFields => ({ scheme: 0, signature: `0x${'ab'.repeat(5)}` });
const WITH_ARBITRARY = (sender: Wallet): EntryFields[] => [{ scheme: 1, signer: sender.address.toLowerCase() }, ARBITRARY_ENTRY()];

const SIGNATURES: Case[] = [
  ...(
    [
      ['secp256k1_scheme', 0, 0x01, 1n],
      ['canonical_hash_msg', 0, 0x02, 0n],
      ['arbitrary_scheme', 1, 0x01, 0n],
      ['arbitrary_length', 1, 0x03, 5n],
    ] as const
  ).map(
    ([name, entry, param, value]): Case => ({
      id: `test_sigparam[${name}]`,
      code: probeOf(op.sigparam(entry, param)),
      expected: [value],
      signatures: WITH_ARBITRARY,
    }),
  ),
  {
    // amsterdam's test_sigparam[secp256k1_length] read 65; bogota's halts, as the pin has it.
    id: 'test_introspection_halts[sigparam_length_of_protocol_validated_entry]',
    code: haltingProbe(op.sigparam(0, 0x03)),
    expected: 'halts',
    signatures: WITH_ARBITRARY,
  },
  {
    id: 'test_sigparam_resolved_signer',
    code: probeOf(op.sigparam(0, 0x00)),
    expected: (sender) => [BigInt(sender)],
    signatures: WITH_ARBITRARY,
  },
  {
    id: 'test_sigparam_resolved_signer (ARBITRARY entry halts)',
    code: haltingProbe(op.sigparam(1, 0x00)),
    expected: 'halts',
    signatures: WITH_ARBITRARY,
  },
  {
    // amsterdam's test_sigparam_copy_arbitrary copied with SIGPARAM 0x04; bogota's uses SIGDATACOPY, as the pin.
    id: 'test_sigdatacopy',
    code: probeOf(op.copy('b5', 1, 0, 32)),
    expected: [word(`0x${'ab'.repeat(5)}`)],
    signatures: WITH_ARBITRARY,
  },
  {
    id: 'test_sigdatacopy (a SECP256K1 entry halts)',
    code: haltingProbe(op.copy('b5', 0, 0, 32)),
    expected: 'halts',
    signatures: WITH_ARBITRARY,
  },
];

const TRANSACTION: Case[] = [
  {
    id: 'test_txparam_max_cost',
    // TXPARAM(0x06) == funds − BALANCE(TXPARAM(0x02)): the max cost is collected before frame 1 runs.
    code: probeOf(`${push(FUNDS)}${op.txparam(0x02)}${op.balance}${op.swap1}${op.sub}${op.txparam(0x06)}${op.eq}`),
    expected: [1n],
  },
  {
    id: 'test_txparam_sender_and_sig_hash',
    code: probeOf(op.txparam(0x02), `${op.txparam(0x08)}${op.iszero}`, op.sigparam(1, 0x02)),
    expected: (sender) => [BigInt(sender), 0n, word(`0x${'5a'.repeat(32)}`)],
    signatures: (sender) => [
      { scheme: 1, signer: sender.address.toLowerCase() },
      {
        scheme: 1,
        signer: sender.address.toLowerCase(),
        msg: `0x${'5a'.repeat(32)}`,
        signature: secp256k1Entry(sender.privateKey, `0x${'5a'.repeat(32)}`),
      },
    ],
  },
  {
    id: 'test_frameparam_resolved_target',
    code: probeOf(op.frameparam(0, 0x00), op.frameparam(1, 0x00)),
    expected: (sender, probe) => [BigInt(sender), BigInt(probe)],
  },
  {
    id: 'test_frameparam_atomic_batch_set',
    code: probeOf(op.frameparam(1, 0x07), op.frameparam(1, 0x03)),
    expected: [1n, 4n],
    frames: (probe) => [VERIFY, probeFrame(probe, { flags: 4 }), { mode: 0, flags: 0, executionGas: 10_000n }],
  },
];

describe('conformance: EEST test_introspection (EIP-8141), against the devnet frame runner', () => {
  const runner = useRunner();

  for (const c of [...TXPARAM, ...TRANSACTION, ...FRAMEPARAM, ...HALTS, ...DATA_READS, ...SIGNATURES]) {
    it(`${c.id}${c.diverges === undefined ? '' : ' (diverges: see the case)'}`, async () => {
      const probe = await runner.contract(c.code);
      const sender = new Wallet(id(`conformance introspection ${c.id}`));
      const address = sender.address.toLowerCase();
      await runner.el('anvil_setBalance', [address, `0x${FUNDS.toString(16)}`]);
      const fields: FrameTxFields = {
        sender: address,
        fees: [PRIORITY_FEE, MAX_FEE, 0n],
        frames: c.frames?.(probe) ?? [VERIFY, probeFrame(probe)],
        signatures: c.signatures?.(sender) ?? [{ scheme: 1, signer: address }],
      };
      const raw = signed(
        fields,
        fields.signatures.map((entry) => (digest: string) => entry.signature ?? secp256k1Entry(sender.privateKey, digest)),
      );
      const executed = await runner.run(raw);
      const slot = (n: number) => runner.slot(probe, n);
      if (c.expected === 'halts') {
        expect(executed.frames[1]!.status).to.equal(0);
        expect(await slot(1)).to.equal(0n);
        return;
      }
      const expected = typeof c.expected === 'function' ? c.expected(address, probe) : c.expected;
      expect(executed.frames[1]!.status).to.equal(1);
      expect(await Promise.all(expected.map((_, i) => slot(i + 1)))).to.deep.equal(expected);
    });
  }
});
