/**
 * EEST (ethereum/execution-specs, `tests/amsterdam/eip8141_frame_transactions/`) cases whose
 * verdict the gate reaches with head state, re-expressed against the running gate
 * (test/conformance/README.md): test_admission_validity (@687eccb), test_expiry_verifier
 * (@ade939a), and the invalid-at-admission cases of test_frame_transactions (@78a3207),
 * test_target_resolution (@2ff2383) and test_state_gas, each with its valid twin where EEST has one.
 */
import { NEW_ACCOUNT_STATE_GAS } from '../../support/frame-fields.js';
import { RECIPIENT } from '../../support/frames.js';
import { call } from '../../support/http.js';
import { APPROVE_3, REVERTS } from '../../support/verify-code.js';
import { useFrameIngress } from '../helpers/submit-target.js';
import {
  accountFor,
  base,
  contractAt,
  deflt,
  expiry,
  GWEI,
  itCases,
  refused,
  sender,
  type Account,
  type Case,
  type Suite,
  TX_GAS_CAP,
  U64,
  U256,
  verify,
} from './eest.js';

const IDENTITY = '0x0000000000000000000000000000000000000004';

/** The sponsor of the [only, pay] cases: a code-less SECP256K1 account, funded. */
const PAYER = accountFor('admission payer');
const sponsored = (from: Account, payFrame: Parameters<typeof verify>[0]) => ({
  ...base(
    from,
    [verify({ flags: 2 }), verify({ flags: 1, target: PAYER.address, ...payFrame }), sender({ target: RECIPIENT })],
    [{ scheme: 1, signer: PAYER.address }],
  ),
});

/** The head the gate will judge at: the next block, at a timestamp fixed ahead of the latest. */
async function nextHeadAt(suite: Suite): Promise<bigint> {
  const latest = await call<{ timestamp: string }>(suite.anvil.url, 'eth_getBlockByNumber', ['latest', false]);
  const at = BigInt(latest.timestamp) + 1_000n;
  await call(suite.anvil.url, 'evm_setNextBlockTimestamp', [Number(at)]);
  return at;
}
const SHAPE = refused('prefix-shape', 'rejected: frames must start with [self], [deploy, self], [only, pay] or [deploy, only, pay]');
const AFTER_GRANT = refused('prefix-shape', 'rejected: frame 1: no VERIFY frame after the payment grant');
const deadline = (at: bigint) => `0x${at.toString(16).padStart(16, '0')}`;
const FIRST = 'EEST puts the expiry frame second; the pin’s mempool rules take it only as frame 0, with state 0';

const ADMISSION: Case[] = [
  {
    id: 'max_cost_overflow',
    balance: U256 - 1n,
    build: (s) => ({ ...base(s), fees: [0n, 1n << 255n, 0n] }),
    expected: refused(
      'payer-balance',
      'rejected: insufficient funds for gas * price + value: the payer 0x78191e959cd578995a6981bdf5931c6b71923a5e cannot cover the maximum cost 1541366395882534535380865166943149085388803400876674368211239629521335625202008064 wei (balance 115792089237316195423570985008687907853269984665640564039457584007913129639935)',
    ),
    diverges: 'EEST names the overflow of max_cost past 2^256; no balance reaches it, so the gate refuses it for funds',
  },
  {
    id: 'max_cost_within_bound',
    balance: U256 - 1n,
    build: (s) => ({ ...base(s), fees: [0n, (U256 - 1n) / TX_GAS_CAP, 0n] }),
    expected: 'admitted',
  },
  {
    id: 'chain_id_above_64_bits',
    build: (s) => ({ ...base(s), chainId: U64 }),
    expected: refused('wrong-chain-id', 'rejected: chain id 18446744073709551616 is not 8141'),
  },
  {
    id: 'chain_id_at_256_bit_maximum',
    build: (s) => ({ ...base(s), chainId: U256 - 1n }),
    expected: refused('wrong-chain-id', `rejected: chain id ${U256 - 1n} is not 8141`),
  },
];

const NONCE: Case[] = [
  {
    id: 'nonce_at_maximum',
    build: async (s, suite) => {
      await call(suite.anvil.url, 'anvil_setNonce', [s.address, `0x${(U64 - 2n).toString(16)}`]);
      return { ...base(s), nonce: U64 - 2n };
    },
    expected: 'admitted',
  },
];

/** The timestamp of the head the last expiry case was judged at. */
let headAt = 0n;
// EEST's block at timestamp T holds the transaction; the gate judges at a head at T and admits for
// a later block (T + 1 at the earliest), so the deadlines here stand one second later: 2, 1, 0.
const EXPIRY: Case[] = (
  [
    ['future_expiry', 2n],
    ['expiry_at_block_timestamp', 1n],
    ['expired', 0n],
  ] as const
).map(([id, offset]) => ({
  id,
  build: async (s: Account, suite: Suite) => {
    headAt = await nextHeadAt(suite);
    return base(s, [expiry({ data: deadline(headAt + offset) }), verify(), sender({ target: RECIPIENT })]);
  },
  // Read once the case is built, when the head's timestamp is known.
  get expected() {
    return offset > 0n
      ? ('admitted' as const)
      : refused(
          'expiry-invalid',
          `rejected: the transaction expires at ${headAt + offset}, and the next block comes after the latest (${headAt})`,
        );
  },
  diverges: FIRST,
}));

const FRAME_TRANSACTIONS: Case[] = [
  {
    id: 'test_sender_frame_before_approval',
    build: (s) => base(s, [sender({ target: RECIPIENT }), verify()]),
    expected: SHAPE,
  },
  {
    id: 'test_verify_frame_reverts',
    build: async (s, suite) => base(s, [verify(), verify({ flags: 0, target: await contractAt(suite, REVERTS) })]),
    expected: AFTER_GRANT,
    diverges: 'EEST finds it invalid when the frame reverts; the pin’s public mempool refuses any VERIFY frame after the prefix first',
  },
  ...(['reverts', 'returns'] as const).map(
    (id): Case => ({
      id: `test_frame_revert_discards_the_approval_it_granted[${id}]`,
      build: async (_s, suite) => ({
        sender: await contractAt(suite, APPROVE_3),
        nonce: 1n,
        frames: [deflt({ flags: 3, target: undefined, executionGas: 400_000n, data: '0x01' })],
        signatures: [],
        fees: [0n, 2n * GWEI, 0n],
      }),
      expected: SHAPE,
      ...(id === 'returns'
        ? { diverges: 'valid in a block (an inner call approves); the pin’s public mempool recognises no prefix without a VERIFY frame' }
        : {}),
    }),
  ),
];

const TARGET_RESOLUTION: Case[] = [
  {
    // amsterdam's test_verify_frame_precompile_target; bogota folds it into test_precompile_target's modes.
    id: 'test_precompile_target[one_word-verify_mode]',
    build: (s) => base(s, [verify(), verify({ flags: 0, target: IDENTITY, data: `0x${'01'.repeat(32)}` })]),
    expected: AFTER_GRANT,
    diverges: 'valid in a block (the precompile runs); the pin’s mempool refuses a VERIFY frame after the prefix',
  },
  { id: 'test_default_code_entry_gas_shortfall[affordable]', build: (s) => sponsored(s, { executionGas: 2_600n }), expected: 'admitted' },
  {
    id: 'test_default_code_entry_gas_shortfall[one_gas_short]',
    build: (s) => sponsored(s, { executionGas: 2_599n }),
    expected: refused('verify-rejected', 'rejected: VERIFY frame 1: out of gas (the frame needs 2600, its limit is 2599)'),
  },
];

const STATE_GAS: Case[] = [
  {
    id: 'test_approve_creates_sender',
    balance: 0n,
    build: (s) => sponsored(s, { stateGas: NEW_ACCOUNT_STATE_GAS }),
    expected: 'admitted',
  },
  {
    id: 'test_approve_sender_creation_unaffordable',
    balance: 0n,
    build: (s) => sponsored(s, { stateGas: 0n }),
    expected: refused(
      'verify-rejected',
      'rejected: VERIFY frame 1: out of state gas (creating the sender needs 183600 state gas, the frame has 0 left)',
    ),
  },
];

describe('conformance: EEST admission cases (EIP-8141), against the gate', () => {
  const suite = useFrameIngress();
  before(async () => {
    await call(suite.anvil.url, 'anvil_setBalance', [PAYER.address, '0xde0b6b3a7640000']);
  });

  itCases(
    suite,
    [
      ['test_admission_constraints', ADMISSION],
      ['test_nonce_at_maximum', NONCE],
      ['test_expiry_verifier_frame', EXPIRY],
      ['test_frame_transactions', FRAME_TRANSACTIONS],
      ['test_target_resolution', TARGET_RESOLUTION],
      ['test_state_gas', STATE_GAS],
    ],
    [PAYER],
  );
});
