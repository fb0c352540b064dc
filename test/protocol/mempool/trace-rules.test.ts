/**
 * The validation-prefix trace rules, each broken once in a self frame over a world in memory:
 * the refusal names the rule, and what the rules allow passes. Through the gate on anvil:
 * test/plugins/gate/pool/simulation/simulate.test.ts.
 */
import { expect } from 'chai';
import { getCreateAddress } from 'ethers';
import { encodeFrameTx, type FrameTxFields } from '../../../support/frames.js';
import {
  APPROVE_1,
  APPROVE_3,
  BANNED,
  callThenApprove,
  callWithoutValueThenApprove,
  CREATE2_FACTORY,
  ENDLESS_LOOP,
  extcodehashLoop,
  GAS_NOT_FOR_A_CALL,
  IF_TXPARAM_SENDER_IS_ME,
  INIT_APPROVE_3,
  READ_SLOT0,
  STOPS,
  thenApprove,
} from '../../../support/verify-code.js';
import { ONE_ETH, rejected, selfFrames, World } from './world.js';

/** EXTCODESIZE of `target`, dropped, then APPROVE(3). */
const extcodesizeThenApprove = (target: string) =>
  thenApprove([`73${target.slice(2)}`, 'PUSH20 target'], ['3b', 'EXTCODESIZE'], ['50', 'POP']);
/** An EIP-7702 delegation designator: 0xef0100 and the delegate's address (23 bytes). */
const delegationTo = (delegate: string) => `0xef0100${delegate.slice(2)}`;

describe('protocol: the trace rules of a validation prefix', () => {
  let world: World;
  beforeEach(() => {
    world = new World();
  });
  const judged = async (code: string, verifyGas?: bigint) =>
    (await world.judge(encodeFrameTx(selfFrames(world.put({ code, balance: ONE_ETH }), verifyGas)))).verdict;

  for (const [name, code] of BANNED) {
    it(`bans ${name}`, async () => {
      expect(await judged(code)).to.deep.equal(rejected(0, `banned opcode ${name}`));
    });
  }

  it('names a byte the fork leaves undefined rather than running it as INVALID', async () => {
    expect(await judged(thenApprove(['0c', 'undefined at the fork']))).to.deep.equal(
      rejected(0, 'banned opcode 0x0c (undefined at the fork)'),
    );
  });

  it('bans INVALID in a nested call whose failure the caller ignores', async () => {
    expect(await judged(callThenApprove('fa', world.put({ code: '0xfe' })))).to.deep.equal(rejected(0, 'banned opcode INVALID'));
  });

  it('allows GAS only right before a call', async () => {
    expect(await judged(GAS_NOT_FOR_A_CALL)).to.deep.equal(rejected(0, 'GAS not followed by a call'));
    expect(await judged(callThenApprove('fa', world.put({ code: STOPS })))).to.equal('valid');
  });

  it("reads storage only of the sender: a library's SLOAD runs on the sender's storage by DELEGATECALL, not by STATICCALL", async () => {
    const library = world.put({ code: READ_SLOT0 });
    expect(await judged(callThenApprove('f4', library))).to.equal('valid');
    expect(await judged(callThenApprove('fa', library))).to.deep.equal(rejected(0, 'storage read outside the sender'));
  });

  it('calls and reads the code only of accounts with code, precompiles and a code-less sender (its default code)', async () => {
    const nobody = '0x00000000000000000000000000000000000e3e3e';
    expect(await judged(callWithoutValueThenApprove(nobody))).to.deep.equal(rejected(0, 'CALL to an account without code'));
    expect(await judged(extcodesizeThenApprove(nobody))).to.deep.equal(rejected(0, 'EXTCODESIZE to an account without code'));
    expect(await judged(callThenApprove('fa', '0x0000000000000000000000000000000000000004'))).to.equal('valid');
    expect(await judged(extcodesizeThenApprove(world.put({ code: STOPS })))).to.equal('valid');
  });

  it('refuses a call into an EIP-7702 delegation', async () => {
    const delegated = world.put({ code: delegationTo(world.put({ code: STOPS })) });
    expect(await judged(callThenApprove('fa', delegated))).to.deep.equal(rejected(0, 'STATICCALL to an EIP-7702 delegation'));
  });

  it('refuses CREATE2 outside a deploy frame (the factory called from a VERIFY frame)', async () => {
    expect(await judged(callWithoutValueThenApprove(world.put({ code: CREATE2_FACTORY })))).to.deep.equal(
      rejected(0, 'banned opcode CREATE2'),
    );
  });

  it('checks the budget at every jump, call and code read: a loop ends where the budget says', async () => {
    let checks = 0;
    const spent = new Error('over budget');
    const checkBudget = () => {
      if (++checks > 50) throw spent;
    };
    for (const code of [ENDLESS_LOOP, extcodehashLoop(world.put({ code: STOPS }))]) {
      checks = 0;
      const sender = world.put({ code, balance: ONE_ETH });
      const thrown = await world.judge(encodeFrameTx(selfFrames(sender, 90_000n)), { checkBudget }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(thrown, code.slice(0, 12)).to.equal(spent);
    }
  });

  it('halts an endless loop as out of gas when the budget allows it', async () => {
    expect(await judged(ENDLESS_LOOP, 90_000n)).to.deep.equal(rejected(0, 'out of gas'));
  });

  it('runs the EIP-8141 instructions: they are not bytes the fork leaves undefined', async () => {
    expect(await judged(IF_TXPARAM_SENDER_IS_ME)).to.equal('valid');
  });

  it('calls a 23-byte code that is not a delegation', async () => {
    expect(await judged(callThenApprove('fa', world.put({ code: `0x00${'ab'.repeat(22)}` })))).to.equal('valid');
  });

  it('reads a call target as the EVM does, from the low 160 bits of its stack word', async () => {
    const target = world.put({ code: STOPS });
    // PUSH32 with junk above the address, then STATICCALL as callThenApprove does.
    const call = thenApprove(
      ['5f', 'PUSH0'],
      ['5f', 'PUSH0'],
      ['5f', 'PUSH0'],
      ['5f', 'PUSH0'],
      [`7f${'ff'.repeat(12)}${target.slice(2)}`, 'PUSH32     junk, then the target'],
      ['5a', 'GAS'],
      ['fa', 'STATICCALL'],
      ['50', 'POP'],
    );
    expect(await judged(call)).to.equal('valid');
  });

  describe('in a deploy frame', () => {
    /** [deploy → factory running `factoryCode`, self → a sender with code]. */
    const deployed = async (factoryCode: string) => {
      const fields = selfFrames(world.put({ code: APPROVE_3, balance: ONE_ETH }), 20_000n);
      fields.frames.unshift({ mode: 0, flags: 0, target: world.put({ code: factoryCode }), executionGas: 60_000n });
      return (await world.judge(encodeFrameTx(fields))).verdict;
    };
    const installedNothing = rejected(
      0,
      'no code at the sender after deploy',
      'the deploy frame installed none; the code there was already',
      'deploy',
    );

    it('allows a call without value, and a STATICCALL whatever its third stack word (no value there)', async () => {
      const target = world.put({ code: STOPS });
      const push = `73${target.slice(2)}`;
      // CALL with value 0; STATICCALL with argsOffset 1 where CALL would have its value.
      expect(await deployed(`0x5f5f5f5f5f${push}5af15000`)).to.deep.equal(installedNothing);
      expect(await deployed(`0x5f5f5f6001${push}5afa5000`)).to.deep.equal(installedNothing);
    });

    it("allows CREATE and a store at the sender: the sender's init code stores, then installs its code", async () => {
      // PUSH1 1, PUSH0, SSTORE (slot 0 of the account being created), then APPROVE_3's init code.
      const init = `0x60015f55${INIT_APPROVE_3.slice(2)}`;
      const createFactory = '0x365f5f37365f5ff05000';
      const factory = world.put({ code: createFactory, nonce: 1n });
      const sender = world.put({ balance: ONE_ETH }, getCreateAddress({ from: factory, nonce: 1 }));
      const fields = selfFrames(sender, 20_000n);
      fields.frames.unshift({ mode: 0, flags: 0, target: factory, executionGas: 75_000n, stateGas: 300_000n, data: init });
      expect((await world.judge(encodeFrameTx(fields))).verdict).to.equal('valid');
    });

    it('refuses a store outside the sender', async () => {
      expect(await deployed('0x5f5f5500')).to.deep.equal(rejected(0, 'state change outside the sender', undefined, 'deploy'));
    });

    it('refuses a call that carries value', async () => {
      const target = world.put({ code: STOPS });
      const callWithValue = `0x5f5f5f5f6001${`73${target.slice(2)}`}5af15000`;
      expect(await deployed(callWithValue)).to.deep.equal(rejected(0, 'value transfer in the validation prefix', undefined, 'deploy'));
    });
  });

  describe("a code-less sender's default code", () => {
    /** [only → a code-less sender (default code), pay → a sponsor whose code reads `read`'s size, then APPROVE(1)]. */
    const sponsoredReading = async (read: (sender: string) => string) => {
      const sender = `0x${'5e'.repeat(20)}`;
      const sponsorCode = `0x73${read(sender).slice(2)}3b50${APPROVE_1.slice(2)}`;
      const fields: FrameTxFields = {
        sender,
        frames: [
          { mode: 1, flags: 2, executionGas: 20_000n },
          { mode: 1, flags: 1, target: world.put({ code: sponsorCode, balance: ONE_ETH }), executionGas: 20_000n, stateGas: 183_600n },
        ],
        // Not verified here: the prefix runs once the entries have been.
        signatures: [{ scheme: 1, signer: sender, signature: `0x00${'11'.repeat(64)}` }],
        fees: [0n, 2_000_000_000n, 0n],
      };
      return (await world.judge(encodeFrameTx(fields))).verdict;
    };

    it('may be read by a sponsor; another code-less account may not', async () => {
      expect(await sponsoredReading((sender) => sender)).to.equal('valid');
      expect(await sponsoredReading(() => '0x00000000000000000000000000000000000e3e3e')).to.deep.equal(
        rejected(1, 'EXTCODESIZE to an account without code'),
      );
    });
  });
});
