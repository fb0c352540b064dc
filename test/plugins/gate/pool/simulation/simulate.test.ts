import { expect } from 'chai';
import { getCreate2Address, keccak256 } from 'ethers';
import {
  APPROVE_1,
  APPROVE_2,
  APPROVE_3,
  APPROVE_IF_SLOT0,
  approveIfPrecompileAccepts,
  BANNED,
  bigContract,
  callThenApprove,
  callWithoutValueThenApprove,
  CREATE2_FACTORY,
  ENDLESS_LOOP,
  extcodehashLoop,
  GAS_NOT_FOR_A_CALL,
  IF_ARBITRARY_ENTRY_IS_DEADBEEF,
  IF_FRAME1_IS_SENDER_MODE,
  IF_TXPARAM_SENDER_IS_ME,
  ifFrame1DataIs,
  INIT_APPROVE_3,
  initCodeOf,
  nestedApprove,
  precompileLoop,
  READ_SLOT0,
  REVERTS,
  STOPS,
  UNDEFINED_TXPARAM,
} from '../../../../../support/verify-code.js';
import { encodeFrameTx, RECIPIENT, secpAccount, signed, type FrameFields, type FrameTxFields } from '../../../../../support/frames.js';
import { call, rpc } from '../../../../../support/http.js';
import { pointEvaluationInput, wrongPointEvaluationInput } from '../../../../../support/kzg.js';
import { walletFor } from '../../../../../support/keys.js';
import { checkFrameTransaction, decodeCode, decodeFrameTransaction, NEW_ACCOUNT_STATE_GAS } from '../../../../../protocol/index.js';
import { Refusal } from '../../../../../plugins/gate/errors.js';
import { SimulationFault, simulatePrefix } from '../../../../../plugins/gate/pool/simulation/simulate.js';
import type { HeadState } from '../../../../../plugins/gate/head/state.js';
import { useFrameIngress } from '../../../../helpers/submit-target.js';

const ONE_ETH = '0xde0b6b3a7640000';
let next = 0x1000;
/** A fresh address for each account the tests put code on. */
const freshAddress = () => `0x${(next++).toString(16).padStart(40, 'c')}`;

const transfer: FrameFields = { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n, value: 1n };
const selfFrames = (sender: string, verifyGas = 50_000n): FrameTxFields => ({
  sender,
  frames: [{ mode: 1, flags: 3, executionGas: verifyGas }, transfer],
  signatures: [],
  fees: [0n, 2_000_000_000n, 0n],
});

/** [only → sender, pay → sponsor (creating the sender: 183,600 state gas), a call without value]. */
const sponsoredFrames = (sender: string, sponsor: string, signatures: FrameTxFields['signatures'] = []): FrameTxFields => ({
  sender,
  frames: [
    { mode: 1, flags: 2, executionGas: 20_000n },
    { mode: 1, flags: 1, target: sponsor, executionGas: 20_000n, stateGas: 183_600n },
    { ...transfer, value: 0n },
  ],
  signatures,
  fees: [0n, 2_000_000_000n, 0n],
});

/** EIP-8037: a new account (120 bytes) with APPROVE_2's code, 1,530 a byte. */
const DEPLOY_APPROVE_2 = 1_530n * (120n + BigInt((APPROVE_2.length - 2) / 2));

describe('gate: validation prefix simulated in the embedded EVM (stock anvil)', () => {
  const suite = useFrameIngress();

  const el = (method: string, params: unknown[]) => call(suite.anvil.url, method, params);
  /** Code (and funds) on a fresh account, then a new block: reads are pinned to block numbers. */
  const account = async (code: string, options: { funded?: boolean; slot0?: string } = {}) => {
    const address = freshAddress();
    await el('anvil_setCode', [address, code]);
    if (options.funded !== false) await el('anvil_setBalance', [address, ONE_ETH]);
    if (options.slot0 !== undefined) await el('anvil_setStorageAt', [address, '0x0', options.slot0]);
    await el('evm_mine', []);
    return address;
  };
  const submit = async (raw: string, id = 1) => (await rpc(suite.ingress.url, 'eth_sendRawTransaction', [raw], id)).text;
  const admitted = (raw: string, id = 1) => JSON.stringify({ jsonrpc: '2.0', id, result: keccak256(raw) });
  const refusalOf = async (raw: string) => JSON.parse(await submit(raw)).error;
  const rejected = (frame: number, cause: string, detail?: string, mode = 'VERIFY') => ({
    code: -32000,
    message: `rejected: ${mode} frame ${frame}: ${cause}${detail === undefined ? '' : ` (${detail})`}`,
    data: { reason: 'verify-rejected', frame, cause },
  });

  describe('admits', () => {
    afterEach(() => expect(suite.target.received).to.have.length(1));

    it('an account whose code calls APPROVE(3) unconditionally', async () => {
      const raw = encodeFrameTx(selfFrames(await account(APPROVE_3)));
      expect(await submit(raw, 7)).to.equal(admitted(raw, 7));
      expect(suite.target.received).to.deep.equal([raw]);
    });

    it('code that reads a slot of the sender through a DELEGATECALLed library', async () => {
      const library = await account(READ_SLOT0, { funded: false });
      const raw = encodeFrameTx(selfFrames(await account(callThenApprove('f4', library))));
      expect(await submit(raw)).to.equal(admitted(raw));
    });

    it('[only, pay] with a contract sender and a contract sponsor', async () => {
      const sender = await account(APPROVE_2, { funded: false });
      const sponsor = await account(APPROVE_1);
      const fields = sponsoredFrames(sender, sponsor);
      const raw = encodeFrameTx(fields);
      expect(await submit(raw)).to.equal(admitted(raw));
    });

    it('[only, pay] with a contract sender and a code-less sponsor (default code signs for it)', async () => {
      const sender = await account(APPROVE_2, { funded: false });
      const sponsor = secpAccount();
      await el('anvil_setBalance', [sponsor.address, ONE_ETH]);
      await el('evm_mine', []);
      const fields = sponsoredFrames(sender, sponsor.address, [
        { scheme: 0x00, signature: '0x' },
        { scheme: 0x01, signer: sponsor.address },
      ]);
      const raw = signed(fields, [() => '0x', sponsor.sign]);
      expect(await submit(raw)).to.equal(admitted(raw));
    });

    it("[deploy, self]: a factory installs the account's code at the sender, which then approves", async () => {
      const factory = await account(CREATE2_FACTORY, { funded: false });
      const sender = getCreate2Address(factory, `0x${'00'.repeat(32)}`, keccak256(INIT_APPROVE_3)).toLowerCase();
      await el('anvil_setBalance', [sender, ONE_ETH]);
      await el('evm_mine', []);
      const fields = selfFrames(sender, 20_000n);
      // EIP-8037: the code deposited, 1,530 a byte (the sender exists already: it is funded).
      const stateGas = 1_530n * BigInt((APPROVE_3.length - 2) / 2);
      fields.frames.unshift({ mode: 0, flags: 0, target: factory, executionGas: 70_000n, stateGas, data: INIT_APPROVE_3 });
      const raw = encodeFrameTx(fields);
      expect(await submit(raw)).to.equal(admitted(raw));
    });
  });

  it('refuses [deploy, self] whose deploy frame installs nothing at a sender that already has code', async () => {
    const factory = await account(STOPS, { funded: false });
    const fields = selfFrames(await account(APPROVE_3), 20_000n);
    fields.frames.unshift({ mode: 0, flags: 0, target: factory, executionGas: 10_000n });
    expect(await refusalOf(encodeFrameTx(fields))).to.deep.equal(
      rejected(0, 'no code at the sender after deploy', 'the deploy frame installed none; the code there was already', 'deploy'),
    );
    expect(suite.target.received).to.deep.equal([]);
  });

  it('one pending transaction per paymaster with code: a second sender is refused until the first is done', async () => {
    const sponsor = await account(APPROVE_1);
    const first = encodeFrameTx(sponsoredFrames(await account(APPROVE_2, { funded: false }), sponsor));
    const second = encodeFrameTx(sponsoredFrames(await account(APPROVE_2, { funded: false }), sponsor));
    expect(await submit(first)).to.equal(admitted(first));
    expect(await refusalOf(second)).to.deep.equal({
      code: -32000,
      message: `rejected: the paymaster ${sponsor} already pays for 1 pending transaction: a sponsor with code takes one at a time (EIP-8141 mempool rules); retry once it is included`,
      data: { reason: 'paymaster-pending' },
    });
    // The next head shows the first done (skip_after_blocks 1): the paymaster may pay again.
    await el('evm_mine', []);
    expect(await submit(second)).to.equal(admitted(second));
    expect(suite.target.received).to.deep.equal([first, second]);
  });

  describe('the EIP-8141 instructions read the transaction', () => {
    it('TXPARAM(0x02) is the sender', async () => {
      const raw = encodeFrameTx(selfFrames(await account(IF_TXPARAM_SENDER_IS_ME)));
      expect(await submit(raw)).to.equal(admitted(raw));
    });

    it("FRAMEPARAM(0x02, 1) is the next frame's mode", async () => {
      const raw = encodeFrameTx(selfFrames(await account(IF_FRAME1_IS_SENDER_MODE)));
      expect(await submit(raw)).to.equal(admitted(raw));
    });

    it("FRAMEDATALOAD(1, 0) is the next frame's data, and a different word is refused", async () => {
      const word = `0x${'a5'.repeat(32)}`;
      const code = ifFrame1DataIs(word);
      const fields = selfFrames(await account(code));
      fields.frames[1] = { ...fields.frames[1]!, data: word };
      const raw = encodeFrameTx(fields);
      expect(await submit(raw)).to.equal(admitted(raw));
      const other = selfFrames(await account(code));
      other.frames[1] = { ...other.frames[1]!, data: `0x${'5a'.repeat(32)}` };
      expect(await refusalOf(encodeFrameTx(other))).to.deep.equal(rejected(0, 'reverted'));
    });

    it('SIGPARAM(0x03, 0) and SIGDATACOPY read an ARBITRARY entry, and other bytes are refused', async () => {
      const fields = selfFrames(await account(IF_ARBITRARY_ENTRY_IS_DEADBEEF));
      fields.signatures = [{ scheme: 0x00, signature: '0xdeadbeef' }];
      const raw = encodeFrameTx(fields);
      expect(await submit(raw)).to.equal(admitted(raw));
      const other = selfFrames(await account(IF_ARBITRARY_ENTRY_IS_DEADBEEF));
      other.signatures = [{ scheme: 0x00, signature: '0xdeadbeee' }];
      expect(await refusalOf(encodeFrameTx(other))).to.deep.equal(rejected(0, 'reverted'));
    });

    it('TXPARAM of an undefined parameter halts the frame', async () => {
      expect(await refusalOf(encodeFrameTx(selfFrames(await account(UNDEFINED_TXPARAM))))).to.deep.equal(
        rejected(0, 'halted: undefined TXPARAM'),
      );
    });
  });

  it('admits [deploy, only, pay] for a sender the deploy frame creates: no creation state gas owed at the pay frame', async () => {
    const factory = await account(CREATE2_FACTORY, { funded: false });
    const init = initCodeOf(APPROVE_2);
    const sender = getCreate2Address(factory, `0x${'00'.repeat(32)}`, keccak256(init)).toLowerCase();
    const sponsor = await account(APPROVE_1);
    const fields: FrameTxFields = {
      sender,
      frames: [
        { mode: 0, flags: 0, target: factory, executionGas: 60_000n, stateGas: DEPLOY_APPROVE_2, data: init },
        { mode: 1, flags: 2, executionGas: 10_000n },
        { mode: 1, flags: 1, target: sponsor, executionGas: 10_000n },
        { ...transfer, value: 0n },
      ],
      signatures: [],
      fees: [0n, 2_000_000_000n, 0n],
    };
    const raw = encodeFrameTx(fields);
    expect(await submit(raw)).to.equal(admitted(raw));
  });

  describe("draws a deploy frame's creations from its own state-gas pool (EIP-8037 in the EVM)", () => {
    const deploying = async (stateGas: bigint) => {
      const factory = await account(CREATE2_FACTORY, { funded: false });
      const init = initCodeOf(APPROVE_2);
      const sender = getCreate2Address(factory, `0x${'00'.repeat(32)}`, keccak256(`${init}00`)).toLowerCase();
      const sponsor = await account(APPROVE_1);
      return encodeFrameTx({
        sender,
        frames: [
          { mode: 0, flags: 0, target: factory, executionGas: 60_000n, stateGas, data: `${init}00` },
          { mode: 1, flags: 2, executionGas: 10_000n },
          { mode: 1, flags: 1, target: sponsor, executionGas: 10_000n },
          { ...transfer, value: 0n },
        ],
        signatures: [],
        fees: [0n, 2_000_000_000n, 0n],
      });
    };

    it('halts the frame when the pool cannot create the account (CREATE2 charges it first)', async () => {
      expect(await refusalOf(await deploying(NEW_ACCOUNT_STATE_GAS - 1n))).to.deep.equal(
        rejected(0, 'out of state gas', undefined, 'deploy'),
      );
    });

    it('fails the creation when the pool covers the account but not its code, one short: nothing installed', async () => {
      expect(await refusalOf(await deploying(DEPLOY_APPROVE_2 - 1n))).to.deep.equal(
        rejected(0, 'no code at the sender after deploy', undefined, 'deploy'),
      );
    });
  });

  it('counts an APPROVE made in a nested call only while every call around it succeeds', async () => {
    const kept = encodeFrameTx(selfFrames(await account(nestedApprove(false))));
    expect(await submit(kept)).to.equal(admitted(kept));
    const undone = encodeFrameTx(selfFrames(await account(nestedApprove(true))));
    expect(await refusalOf(undone)).to.deep.equal(rejected(0, 'no APPROVE'));
  });

  it('admits or refuses code gated on its own slot as the slot changes on the EL; the verdict lasts while its state does', async () => {
    const sender = await account(APPROVE_IF_SLOT0, { slot0: `0x${'00'.repeat(32)}` });
    const raw = encodeFrameTx(selfFrames(sender));
    const cachedRefusal = {
      ...rejected(0, 'reverted'),
      message: 'rejected: VERIFY frame 0: reverted (cached verdict)',
      data: { reason: 'verify-rejected', frame: 0, cause: 'reverted', cached: true },
    };
    expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'reverted'));
    expect(await refusalOf(raw), 'same head: the cached verdict').to.deep.equal(cachedRefusal);
    await el('evm_mine', []);
    expect(await refusalOf(raw), 'a new head, nothing it read changed: still the cached verdict').to.deep.equal(cachedRefusal);
    await el('anvil_setStorageAt', [sender, '0x0', `0x${'00'.repeat(31)}01`]);
    await el('evm_mine', []);
    expect(await submit(raw)).to.equal(admitted(raw));
    expect(suite.target.received).to.deep.equal([raw]);
  });

  describe('refuses with the rule broken, forwarding nothing', () => {
    afterEach(() => expect(suite.target.received, 'forwarded').to.deep.equal([]));

    for (const [name, code] of BANNED) {
      it(`banned opcode ${name}`, async () => {
        expect(await refusalOf(encodeFrameTx(selfFrames(await account(code))))).to.deep.equal(rejected(0, `banned opcode ${name}`));
      });
    }

    it('banned opcode INVALID in a nested call whose failure the caller ignores', async () => {
      const library = await account('0xfe', { funded: false });
      const raw = encodeFrameTx(selfFrames(await account(callThenApprove('fa', library))));
      expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'banned opcode INVALID'));
    });

    it('GAS not followed by a call', async () => {
      expect(await refusalOf(encodeFrameTx(selfFrames(await account(GAS_NOT_FOR_A_CALL))))).to.deep.equal(
        rejected(0, 'GAS not followed by a call'),
      );
    });

    it('a storage read outside the sender, through STATICCALL', async () => {
      const library = await account(READ_SLOT0, { funded: false });
      const raw = encodeFrameTx(selfFrames(await account(callThenApprove('fa', library))));
      expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'storage read outside the sender'));
    });

    it('a CALL to an account without code', async () => {
      const raw = encodeFrameTx(selfFrames(await account(callWithoutValueThenApprove('0x00000000000000000000000000000000000e3e3e'))));
      expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'CALL to an account without code'));
    });

    it('a frame that reverts', async () => {
      expect(await refusalOf(encodeFrameTx(selfFrames(await account(REVERTS))))).to.deep.equal(rejected(0, 'reverted'));
    });

    it('a frame that stops without APPROVE', async () => {
      expect(await refusalOf(encodeFrameTx(selfFrames(await account(STOPS))))).to.deep.equal(rejected(0, 'no APPROVE'));
    });

    it('a self frame that approves execution only (the wrong scope)', async () => {
      expect(await refusalOf(encodeFrameTx(selfFrames(await account(APPROVE_2))))).to.deep.equal(
        rejected(0, 'wrong APPROVE scope', 'granted 2, the frame calls for exactly 3'),
      );
    });

    it('a pay frame whose code approves a scope its flags do not allow', async () => {
      const sender = await account(APPROVE_2, { funded: false });
      const sponsor = await account(APPROVE_3);
      const fields = sponsoredFrames(sender, sponsor);
      expect(await refusalOf(encodeFrameTx(fields))).to.deep.equal(
        rejected(1, 'reverted', "APPROVE(3) beyond the frame's allowed scope 1"),
      );
    });

    it('an endless loop, answered within a second', async () => {
      const raw = encodeFrameTx(selfFrames(await account(ENDLESS_LOOP), 90_000n));
      const started = Date.now();
      expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'out of gas'));
      expect(Date.now() - started).to.be.below(1_000);
    });
  });

  // Over the budget: test/plugins/gate/pool/work-pool.test.ts (PoolSettings.simulationBudgetMs); no
  // 100,000-gas code found takes the default 200 ms on this machine any more.
  describe('costs what it costs (issue 25): cached code, cheap BLS additions, KZG', () => {
    /** The BLS12-381 G2 generator as EIP-2537 encodes it (each coordinate's c0 then c1, 64 bytes each). */
    const G2 = [
      '024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8',
      '13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e',
      '0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801',
      '0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be',
    ]
      .map((coordinate) => coordinate.padStart(128, '0'))
      .join('');

    it('a loop of EXTCODEHASH over a 24 KB contract (~1 s before code was hashed once): judged out of gas within the budget', async () => {
      const contract = await account(bigContract(1), { funded: false });
      const raw = encodeFrameTx(selfFrames(await account(extcodehashLoop(contract)), 100_000n));
      expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'out of gas'));
    });

    it('a loop of BLS12-381 G2ADD (~1.5 s before additions skipped the subgroup check): judged out of gas within the budget', async () => {
      const raw = encodeFrameTx(selfFrames(await account(precompileLoop(0x0d, `${G2}${G2}`, 256)), 100_000n));
      expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'out of gas'));
    });

    it('KZG point evaluation (0x0a) with a valid proof is admitted', async () => {
      const raw = encodeFrameTx(selfFrames(await account(approveIfPrecompileAccepts(0x0a, pointEvaluationInput().slice(2), 64)), 90_000n));
      expect(await submit(raw)).to.equal(admitted(raw));
      expect(suite.target.received).to.deep.equal([raw]);
    });

    it('KZG point evaluation (0x0a) with a proof that does not hold fails the call: the frame reverts, a clean refusal', async () => {
      const raw = encodeFrameTx(
        selfFrames(await account(approveIfPrecompileAccepts(0x0a, wrongPointEvaluationInput().slice(2), 64)), 90_000n),
      );
      expect(await refusalOf(raw)).to.deep.equal(rejected(0, 'reverted'));
      expect(suite.target.received).to.deep.equal([]);
    });
  });

  it('refuses a tampered SECP256K1 entry before running any code', async () => {
    const sender = await account(APPROVE_3);
    const key = walletFor('tampered SECP256K1 entry');
    const fields = selfFrames(sender);
    fields.signatures = [{ scheme: 0x01, signer: key.address.toLowerCase(), signature: `0x00${'11'.repeat(64)}` }];
    expect((await refusalOf(encodeFrameTx(fields))).data).to.deep.equal({ reason: 'sig-invalid' });
  });
});

describe('gate: an unexpected error while simulating is a classified refusal', () => {
  it("names only the error's class; its message and place go to `bug` for the log; what was read goes with it", async () => {
    const sender = `0x${'5e'.repeat(20)}`;
    const tx = decodeFrameTransaction(encodeFrameTx(selfFrames(sender)));
    const facts = checkFrameTransaction(tx, { chainId: 8141n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n });
    // A HeadState whose storage read fails the way no EL answer should make it: a bug.
    const state = {
      account: async () => ({ nonce: 1n, balance: 10n ** 18n }),
      codeEntry: async (address: string) => decodeCode(address === sender ? APPROVE_IF_SLOT0.toLowerCase() : '0x'),
      storage: async () => {
        throw new TypeError('internal detail at /srv/secret/path');
      },
    } as unknown as HeadState;
    const head = { number: 5n, baseFee: 7n, timestamp: 1_700_000_000n, coinbase: `0x${'00'.repeat(20)}` };
    const err = await simulatePrefix(tx, facts, head, state).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(err).to.be.instanceOf(SimulationFault).and.instanceOf(Refusal);
    const fault = err as SimulationFault;
    expect([fault.reason, fault.detail, fault.extra]).to.deep.equal([
      'verify-rejected',
      'VERIFY frame 0: simulation error: TypeError',
      { frame: 0, cause: 'simulation error: TypeError' },
    ]);
    expect(fault.bug).to.match(/^TypeError: internal detail at \/srv\/secret\/path at /);
    expect(fault.dependencies?.accounts).to.deep.include([sender, '1', '1000000000000000000']);
  });
});
