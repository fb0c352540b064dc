/**
 * EEST `tests/amsterdam/eip8141_frame_transactions/test_static_validity.py` (ethereum/execution-specs
 * @2c2dc92) and the cases its successor `tests/bogota/…/test_static_validity.py` (@000fbe5) added
 * (state gas in the 64-bit sums, the expiry frame's state gas, the cap's state-gas exemption), re-expressed case by case against the running gate (test/conformance/README.md): each
 * case is named by its EEST table and id, built with this project's encoder, and sent through the
 * ingress to a stock anvil. A statically invalid transaction is refused with the gate's reason
 * (its taxonomy, not EEST's exception names); a valid one is admitted and forwarded. Where the
 * chain or the pin's public-mempool rules decide otherwise than EEST's block validity, the case
 * says so (`diverges`).
 */
import { p256 } from '@noble/curves/nist.js';
import { expect } from 'chai';
import { getBytes, keccak256, SigningKey } from 'ethers';
import { encodeFrameTx, secp256k1Entry, type EntryFields, type FrameFields, type FrameTxFields } from '../../support/frames.js';
import { rpc } from '../../support/http.js';
import { p256SecretFor } from '../../support/keys.js';
import { APPROVE_3, STOPS } from '../../support/verify-code.js';
import { useFrameIngress } from '../helpers/submit-target.js';
import {
  accountFor,
  base,
  contractAt,
  deflt,
  EXPIRY_VERIFIER,
  expiry,
  FOREIGN_TARGET,
  GWEI,
  itCases,
  refused,
  sender,
  type Case,
  type Suite,
  TX_GAS_CAP,
  U64,
  U256,
  verify,
} from './eest.js';

const SECP_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const DIGEST = keccak256('0x01');

const word = (value: bigint) => value.toString(16).padStart(64, '0');

/** A SECP256K1 entry over DIGEST by `key`, its signature bytes (v, r, s) replaced by `tamper` if given. */
function secpDigestEntry(key: string, signer: string | undefined, tamper?: (v: number, r: bigint, s: bigint) => string): EntryFields {
  const sig = new SigningKey(key).sign(DIGEST);
  const signature = tamper === undefined ? secp256k1Entry(key, DIGEST) : tamper(sig.yParity, BigInt(sig.r), BigInt(sig.s));
  return { scheme: 1, ...(signer === undefined ? {} : { signer }), msg: DIGEST, signature };
}

const P256_SECRET = p256SecretFor('conformance: static validity p256');
const P256_POINT = p256.getPublicKey(P256_SECRET, false).slice(1);
const P256_SIGNER = computeP256Signer(P256_POINT);
function computeP256Signer(point: Uint8Array): string {
  return `0x${keccak256(point).slice(-40)}`;
}
const p256Bytes = (r: bigint, s: bigint, point = P256_POINT) => `0x${word(r)}${word(s)}${Buffer.from(point).toString('hex')}`;
function p256Entry(digest = DIGEST, signer: string | undefined = P256_SIGNER, override?: string): EntryFields {
  const sig = p256.sign(getBytes(DIGEST), P256_SECRET, { prehash: false, lowS: true, format: 'compact' });
  const signature = override ?? `0x${Buffer.from(sig).toString('hex')}${Buffer.from(P256_POINT).toString('hex')}`;
  return { scheme: 2, ...(signer === undefined ? {} : { signer }), msg: digest, signature };
}

const TX_FIELD_CASES: Case[] = [
  {
    id: 'nonce_overflow',
    build: (s) => ({ ...base(s), nonce: U64 - 1n }),
    expected: refused('nonce-max', 'rejected: nonce has max value: 18446744073709551615 cannot be incremented (EIP-2681)'),
  },
  {
    id: 'priority_fee_above_max_fee',
    build: (s) => ({ ...base(s), fees: [2n * GWEI + 1n, 2n * GWEI, 0n] }),
    expected: refused('fee-order', 'rejected: max_priority_fee_per_gas exceeds max_fee_per_gas'),
  },
  { id: 'priority_fee_equals_max_fee', build: (s) => ({ ...base(s), fees: [2n * GWEI, 2n * GWEI, 0n] }), expected: 'admitted' },
  {
    id: 'max_fee_overflow',
    build: (s) => ({ ...base(s), fees: [0n, U256, 0n] }),
    expected: refused('rlp-invalid', 'rejected: max_fee_per_gas is out of range'),
  },
  {
    id: 'priority_fee_overflow',
    build: (s) => ({ ...base(s), fees: [U256, 2n * GWEI, 0n] }),
    expected: refused('rlp-invalid', 'rejected: max_priority_fee_per_gas is out of range'),
  },
  {
    id: 'no_frames',
    build: (s) => base(s, []),
    expected: refused('rlp-invalid', 'rejected: a frame transaction carries 1 to 64 frames, not 0'),
  },
  {
    id: 'frame_count_above_max',
    build: (s) => base(s, [verify(), ...Array.from({ length: 64 }, () => deflt())]),
    expected: refused('rlp-invalid', 'rejected: a frame transaction carries 1 to 64 frames, not 65'),
  },
  { id: 'frame_count_at_max', build: (s) => base(s, [verify(), ...Array.from({ length: 63 }, () => deflt())]), expected: 'admitted' },
  {
    id: 'blob_fee_without_blobs',
    build: (s) => ({ ...base(s), fees: [0n, 2n * GWEI, 1n] }),
    expected: refused('blob-not-supported', 'rejected: frame transactions on this chain carry no blobs'),
  },
  {
    id: 'invalid_blob_hash_version',
    build: (s) => ({ ...base(s), fees: [0n, 2n * GWEI, 1n], blobHashes: [`0x02${'00'.repeat(31)}`] }),
    expected: refused('blob-not-supported', 'rejected: frame transactions on this chain carry no blobs'),
    diverges: 'EEST names the bad version byte; this chain refuses any blob first (no data-availability path)',
  },
  {
    id: 'blob_count_above_max',
    build: (s) => ({ ...base(s), fees: [0n, 2n * GWEI, 1n], blobHashes: Array.from({ length: 7 }, () => `0x01${'00'.repeat(31)}`) }),
    expected: refused('blob-not-supported', 'rejected: frame transactions on this chain carry no blobs'),
    diverges: 'EEST counts the blobs; this chain refuses any blob first',
  },
];

const frameInvalid = (detail: string) => refused('frame-invalid', `rejected: ${detail}`);

const FRAME_CASES: Case[] = [
  {
    id: 'default_frame_with_value',
    build: (s) => base(s, [verify(), deflt({ value: 1n })]),
    expected: frameInvalid('frame 1: only SENDER frames may carry value'),
  },
  {
    id: 'verify_frame_with_value',
    build: (s) => base(s, [verify({ value: 1n })]),
    expected: frameInvalid('frame 0: only SENDER frames may carry value'),
  },
  { id: 'sender_frame_with_value', build: (s) => base(s, [verify(), sender({ value: 1n })]), expected: 'admitted' },
  {
    id: 'approve_execution_frame_with_foreign_target',
    build: (s) => base(s, [verify({ flags: 2, target: FOREIGN_TARGET })]),
    expected: frameInvalid('frame 0: a frame that may grant execution must target the sender'),
  },
  {
    id: 'approve_execution_frame_with_explicit_sender_target',
    build: (s) => base(s, [verify({ target: s.address })]),
    expected: 'admitted',
  },
  {
    id: 'atomic_flag_on_verify_frame',
    build: (s) => base(s, [verify(), verify({ flags: 4 }), deflt()]),
    expected: frameInvalid('frame 1: a VERIFY frame cannot be atomic'),
  },
  {
    id: 'atomic_flag_on_last_frame',
    build: (s) => base(s, [verify(), deflt({ flags: 4 })]),
    expected: frameInvalid('frame 1: the last frame cannot be atomic'),
  },
  {
    id: 'atomic_batch_followed_by_verify_frame',
    build: (s) => base(s, [verify(), deflt({ flags: 4 }), verify({ flags: 0 })]),
    expected: frameInvalid('frame 1: an atomic frame cannot precede a VERIFY frame'),
  },
  { id: 'atomic_batch_of_default_frames', build: (s) => base(s, [verify(), deflt({ flags: 4 }), deflt()]), expected: 'admitted' },
  {
    id: 'approval_scope_on_flagged_batch_frame',
    build: (s) => base(s, [verify(), deflt({ flags: 5 }), deflt()]),
    expected: frameInvalid('frame 1: frames inside an atomic batch carry no approval bits'),
  },
  {
    id: 'approval_scope_on_batch_terminating_frame',
    build: (s) => base(s, [verify(), deflt({ flags: 4 }), deflt({ flags: 1 })]),
    expected: frameInvalid('frame 2: frames inside an atomic batch carry no approval bits'),
  },
  {
    id: 'approval_scope_after_batch_terminator',
    build: (s) => base(s, [verify(), deflt({ flags: 4 }), deflt(), deflt({ flags: 1 })]),
    expected: 'admitted',
  },
  {
    id: 'frame_gas_sum_overflows',
    build: (s) => base(s, [verify(), deflt({ executionGas: U64 - 1n })]),
    expected: frameInvalid('frame 1: total gas overflows 64 bits'),
  },
  {
    id: 'frame_state_gas_sum_overflows',
    build: (s) => base(s, [verify(), deflt({ stateGas: U64 - 1n })]),
    expected: frameInvalid('frame 1: total gas overflows 64 bits'),
  },
  {
    id: 'frame_gas_cross_dimension_sum_overflows',
    build: (s) => base(s, [verify(), deflt({ executionGas: 1n << 63n, stateGas: 1n << 63n })]),
    expected: frameInvalid('frame 1: total gas overflows 64 bits'),
  },
  { id: 'undefined_frame_mode', build: (s) => base(s, [verify(), deflt({ mode: 3 })]), expected: frameInvalid('frame 1: unknown mode 3') },
  {
    id: 'undefined_frame_mode_high',
    build: (s) => base(s, [verify(), deflt({ mode: 255 })]),
    expected: frameInvalid('frame 1: unknown mode 255'),
  },
  {
    id: 'reserved_frame_flag',
    build: (s) => base(s, [verify(), deflt({ flags: 8 })]),
    expected: frameInvalid('frame 1: flags above bit 2 must be zero'),
  },
  {
    id: 'reserved_frame_flag_high',
    build: (s) => base(s, [verify(), deflt({ flags: 0xff })]),
    expected: frameInvalid('frame 1: flags above bit 2 must be zero'),
  },
  {
    id: 'frame_gas_above_64_bits',
    build: (s) => base(s, [verify(), deflt({ executionGas: U64 })]),
    expected: refused('rlp-invalid', 'rejected: frames[1].limits[0] is out of range'),
  },
  {
    id: 'frame_state_gas_above_64_bits',
    build: (s) => base(s, [verify(), deflt({ stateGas: U64 })]),
    expected: refused('rlp-invalid', 'rejected: frames[1].limits[1] is out of range'),
  },
];

const expiryInvalid = (detail: string) => refused('expiry-invalid', `rejected: ${detail}`);
const FIRST = 'EEST puts the expiry frame second; the pin’s mempool rules take it only as frame 0, so it is first here';

const EXPIRY_CASES: Case[] = [
  {
    id: 'expiry_data_empty',
    build: (s) => base(s, [expiry({ data: '0x' }), verify()]),
    expected: expiryInvalid('frame 0: the expiry frame carries exactly 8 bytes of deadline'),
    diverges: FIRST,
  },
  {
    id: 'expiry_data_too_short',
    build: (s) => base(s, [expiry({ data: `0x${'ff'.repeat(7)}` }), verify()]),
    expected: expiryInvalid('frame 0: the expiry frame carries exactly 8 bytes of deadline'),
    diverges: FIRST,
  },
  {
    id: 'expiry_data_too_long',
    build: (s) => base(s, [expiry({ data: `0x${'ff'.repeat(9)}` }), verify()]),
    expected: expiryInvalid('frame 0: the expiry frame carries exactly 8 bytes of deadline'),
    diverges: FIRST,
  },
  {
    id: 'expiry_frame_with_flags',
    build: (s) => base(s, [expiry({ flags: 1 }), verify()]),
    expected: expiryInvalid('frame 0: the expiry frame has flags, value and state gas 0'),
    diverges: FIRST,
  },
  {
    id: 'expiry_frame_with_state_gas',
    build: (s) => base(s, [expiry({ stateGas: 1n }), verify()]),
    expected: expiryInvalid('frame 0: the expiry frame has flags, value and state gas 0'),
    diverges: FIRST,
  },
  {
    id: 'expiry_frame_with_value',
    build: (s) => base(s, [expiry({ value: 1n }), verify()]),
    // Value on a VERIFY frame is a frame rule, checked before the expiry frame's own.
    expected: frameInvalid('frame 0: only SENDER frames may carry value'),
    diverges: FIRST,
  },
  {
    id: 'multiple_expiry_frames',
    build: (s) => base(s, [expiry(), expiry(), verify()]),
    expected: expiryInvalid('frame 1: at most one expiry frame'),
    diverges: FIRST,
  },
  {
    id: 'default_frame_targeting_expiry_verifier',
    build: (s) => base(s, [verify(), deflt({ target: EXPIRY_VERIFIER, data: `0x${'ff'.repeat(7)}` })]),
    expected: 'admitted',
  },
  {
    id: 'verify_frame_with_expiry_data_to_other_target',
    build: async (s, suite) =>
      base(s, [verify(), verify({ flags: 0, target: await contractAt(suite, STOPS), data: `0x${'ff'.repeat(7)}` })]),
    expected: refused('prefix-shape', 'rejected: frame 1: no VERIFY frame after the payment grant'),
    diverges: 'valid in a block; the pin’s public mempool takes no VERIFY frame after the validation prefix (structural rule 8)',
  },
];

const sigInvalid = (detail: string) => refused('sig-invalid', `rejected: ${detail}`);

const YPARITY = sigInvalid('signature 1: y_parity must be 0 or 1');
const RANGE = sigInvalid('signature 1: r or s out of range (s must be low)');
const NOT_RECOVERED = sigInvalid('signature 1: the SECP256K1 signature does not recover the signer');
const SIGNER_LENGTH = refused('rlp-invalid', 'rejected: signatures[1].signer must be empty or 20 bytes');
const MSG = sigInvalid('signature 1: msg must be empty or a non-zero 32-byte digest');
const P256_FAILS = sigInvalid('signature 1: the P256 signature does not verify');

const SIGNATURE_CASES: Case[] = [
  { id: 'secp256k1_digest_entry', build: (s) => base(s, [verify()], [secpDigestEntry(s.key, s.address)]), expected: 'admitted' },
  {
    id: 'secp256k1_signature_too_short',
    build: (s) => base(s, [verify()], [{ ...secpDigestEntry(s.key, s.address), signature: secp256k1Entry(s.key, DIGEST).slice(0, -2) }]),
    expected: sigInvalid('signature 1: SECP256K1 signatures are 65 bytes, not 64'),
  },
  {
    id: 'secp256k1_signature_too_long',
    build: (s) => base(s, [verify()], [{ ...secpDigestEntry(s.key, s.address), signature: `${secp256k1Entry(s.key, DIGEST)}00` }]),
    expected: sigInvalid('signature 1: SECP256K1 signatures are 65 bytes, not 66'),
  },
  {
    id: 'secp256k1_signature_empty',
    build: (s) => base(s, [verify()], [{ ...secpDigestEntry(s.key, s.address), signature: '0x' }]),
    expected: sigInvalid('signature 1: SECP256K1 signatures are 65 bytes, not 0'),
  },
  ...(
    [
      ['secp256k1_v_2', YPARITY, (_v: number, r: bigint, s: bigint) => `0x02${word(r)}${word(s)}`],
      ['secp256k1_v_27', YPARITY, (_v: number, r: bigint, s: bigint) => `0x1b${word(r)}${word(s)}`],
      ['secp256k1_r_zero', RANGE, (v: number, _r: bigint, s: bigint) => `0x0${v}${word(0n)}${word(s)}`],
      ['secp256k1_r_at_curve_order', RANGE, (v: number, _r: bigint, s: bigint) => `0x0${v}${word(SECP_N)}${word(s)}`],
      ['secp256k1_s_zero', RANGE, (v: number, r: bigint) => `0x0${v}${word(r)}${word(0n)}`],
      ['secp256k1_high_s', RANGE, (v: number, r: bigint, s: bigint) => `0x0${1 - v}${word(r)}${word(SECP_N - s)}`],
    ] as const
  ).map(
    ([id, expected, tamper]): Case => ({
      id,
      build: (s) => base(s, [verify()], [secpDigestEntry(s.key, s.address, tamper)]),
      expected,
    }),
  ),
  {
    id: 'secp256k1_signer_mismatch',
    build: (s) => base(s, [verify()], [secpDigestEntry(s.key, FOREIGN_TARGET)]),
    expected: NOT_RECOVERED,
  },
  {
    id: 'secp256k1_wrong_key',
    build: (s) => base(s, [verify()], [secpDigestEntry(accountFor('another key').key, undefined)]),
    expected: NOT_RECOVERED,
  },
  {
    id: 'signer_too_short',
    build: (s) => base(s, [verify()], [{ ...secpDigestEntry(s.key, s.address), signer: `0x${'01'.repeat(19)}` }]),
    expected: SIGNER_LENGTH,
  },
  {
    id: 'signer_too_long',
    build: (s) => base(s, [verify()], [{ ...secpDigestEntry(s.key, s.address), signer: `0x${'01'.repeat(21)}` }]),
    expected: SIGNER_LENGTH,
  },
  ...(
    [
      ['msg_single_byte', '0x01'],
      ['msg_too_short', `0x${'01'.repeat(31)}`],
      ['msg_too_long', `0x${'01'.repeat(33)}`],
      ['msg_all_zeros', `0x${'00'.repeat(32)}`],
    ] as const
  ).map(
    ([id, msg]): Case => ({
      id,
      build: (s) => base(s, [verify()], [{ scheme: 0, msg, signature: '0xabababab' }]),
      expected: MSG,
    }),
  ),
  { id: 'arbitrary_entry', build: (s) => base(s, [verify()], [{ scheme: 0, signature: `0x${'ab'.repeat(5)}` }]), expected: 'admitted' },
  {
    id: 'arbitrary_with_signer',
    build: (s) => base(s, [verify()], [{ scheme: 0, signer: FOREIGN_TARGET, signature: `0x${'ab'.repeat(5)}` }]),
    expected: sigInvalid('signature 1: ARBITRARY entries name no signer'),
  },
  { id: 'p256_valid_entry', build: (s) => base(s, [verify()], [p256Entry()]), expected: 'admitted' },
  {
    id: 'p256_signature_too_short',
    build: (s) => base(s, [verify()], [p256Entry(DIGEST, P256_SIGNER, p256Entry().signature!.slice(0, -2))]),
    expected: sigInvalid('signature 1: P256 signatures are 128 bytes, not 127'),
  },
  {
    id: 'p256_signature_too_long',
    build: (s) => base(s, [verify()], [p256Entry(DIGEST, P256_SIGNER, `${p256Entry().signature!}00`)]),
    expected: sigInvalid('signature 1: P256 signatures are 128 bytes, not 129'),
  },
  { id: 'p256_r_zero', build: (s) => base(s, [verify()], [p256Entry(DIGEST, undefined, p256Bytes(0n, 1n))]), expected: RANGE },
  {
    id: 'p256_r_at_curve_order',
    build: (s) => base(s, [verify()], [p256Entry(DIGEST, undefined, p256Bytes(P256_N, 1n))]),
    expected: RANGE,
  },
  { id: 'p256_s_zero', build: (s) => base(s, [verify()], [p256Entry(DIGEST, undefined, p256Bytes(1n, 0n))]), expected: RANGE },
  {
    id: 'p256_high_s',
    build: (s) => base(s, [verify()], [p256Entry(DIGEST, undefined, p256Bytes(1n, P256_N / 2n + 1n))]),
    expected: RANGE,
  },
  {
    id: 'p256_signer_mismatch',
    build: (s) => base(s, [verify()], [p256Entry(DIGEST, undefined, p256Bytes(1n, 1n))]),
    expected: P256_FAILS,
  },
  {
    id: 'p256_not_on_curve',
    build: (s) => base(s, [verify()], [p256Entry(DIGEST, computeP256Signer(new Uint8Array(64)), p256Bytes(1n, 1n, new Uint8Array(64)))]),
    expected: P256_FAILS,
  },
  {
    id: 'p256_signature_over_different_digest',
    build: (s) => base(s, [verify()], [p256Entry(`0x${'02'.repeat(32)}`)]),
    expected: P256_FAILS,
  },
  {
    id: 'undefined_signature_scheme',
    build: (s) => base(s, [verify()], [{ scheme: 3, signature: `0x${'ab'.repeat(65)}` }]),
    expected: refused('sig-scheme-unknown', 'rejected: signature 1: unknown scheme 0x3'),
  },
  {
    id: 'undefined_signature_scheme_high',
    build: (s) => base(s, [verify()], [{ scheme: 255, signature: `0x${'ab'.repeat(65)}` }]),
    expected: refused('sig-scheme-unknown', 'rejected: signature 1: unknown scheme 0xff'),
  },
];

/** The contract sender of the gas-cap tables: `APPROVE(3)`, funded, nonce 1 (a deployed contract), no entries. */
async function contractSender(suite: Suite, verifyGas: bigint, frames: FrameFields[] = []): Promise<FrameTxFields> {
  const address = await contractAt(suite, APPROVE_3);
  return {
    sender: address,
    nonce: 1n,
    frames: [verify({ executionGas: verifyGas }), ...frames],
    signatures: [],
    fees: [0n, 2n * GWEI, 0n],
  };
}

const GAS_CAP_CASES: Case[] = [
  {
    id: 'at_cap',
    build: (_s, suite) => contractSender(suite, TX_GAS_CAP - 12_475n),
    expected: refused('prefix-gas', 'rejected: validation prefix needs 16764741 gas, over the budget of 100000'),
    diverges: 'valid in a block; the pin’s public mempool takes at most MAX_VERIFY_GAS (100,000) of validation prefix',
  },
  {
    id: 'above_cap',
    build: (_s, suite) => contractSender(suite, TX_GAS_CAP - 12_475n + 1n),
    expected: refused('gas-cap', 'rejected: intrinsic plus execution gas 16777217 exceeds 16777216'),
  },
];

/** EIP-7825's cap binds the execution dimension only: a frame may ask for state gas up to the cap beside it. */
const STATE_GAS_CAP_CASES: Case[] = [
  {
    id: 'state_gas_beside_an_execution_cap',
    build: async (_s, suite) => {
      const tx = await contractSender(suite, TX_GAS_CAP - 12_475n);
      return { ...tx, frames: [verify({ executionGas: TX_GAS_CAP - 12_475n, stateGas: TX_GAS_CAP })] };
    },
    expected: refused('prefix-gas', 'rejected: validation prefix needs 16764741 gas, over the budget of 100000'),
    diverges: 'valid in a block; the pin’s public mempool takes at most MAX_VERIFY_GAS (100,000) of validation prefix',
  },
  {
    // The same exemption where the mempool's prefix budgets do not reach: a frame after the prefix.
    id: 'state_gas_at_cap_after_the_prefix',
    build: (s) => base(s, [verify(), deflt({ stateGas: TX_GAS_CAP })]),
    expected: 'admitted',
  },
];

const TABLES: ReadonlyArray<readonly [string, readonly Case[]]> = [
  ['TX_FIELD_CASES', TX_FIELD_CASES],
  ['FRAME_CASES', FRAME_CASES],
  ['EXPIRY_VERIFIER_CASES', EXPIRY_CASES],
  ['SIGNATURE_CASES', SIGNATURE_CASES],
  ['FRAME_GAS_CAP_CASES', GAS_CAP_CASES],
  ['test_gas_limit_cap_exempts_state_gas', STATE_GAS_CAP_CASES],
];

describe('conformance: EEST test_static_validity (EIP-8141), against the gate', () => {
  const suite = useFrameIngress();

  // CALLDATA_FLOOR_CAP_CASES: `below_cap` (valid in a block) and `above_cap` (over EIP-7825's cap
  // through the calldata floor) both carry ~262 KB of frame data. Diverges: this chain takes raw
  // transactions of at most 128 KiB (size-limit's `max_raw_transaction_bytes`): both refused as oversized.
  for (const [id, extra] of [
    ['below_cap', 0n],
    ['above_cap', 1n],
  ] as const) {
    it(`CALLDATA_FLOOR_CAP_CASES[${id}] (diverges: see the case)`, async () => {
      const length = (TX_GAS_CAP - 12_950n) / 64n + extra;
      const fields = await contractSender(suite, 10_000n, [deflt({ executionGas: 0n, data: `0x${'00'.repeat(Number(length))}` })]);
      const reply = await rpc(suite.ingress.url, 'eth_sendRawTransaction', [encodeFrameTx(fields)]);
      expect(JSON.parse(reply.text)).to.deep.equal({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: 'oversized transaction', data: { max_bytes: 131072 } },
      });
      expect(suite.target.received).to.deep.equal([]);
    });
  }

  itCases(suite, TABLES);
});
