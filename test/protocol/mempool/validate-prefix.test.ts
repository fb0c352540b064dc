/**
 * A validation prefix run in the EIP-8141 EVM under the trace rules, over a world in memory (no
 * EL): what it admits, why it refuses, where it stops. The same prefixes through the gate on
 * anvil: test/plugins/gate/pool/simulation/simulate.test.ts.
 */
import { expect } from 'chai';
import { getCreate2Address, keccak256 } from 'ethers';
import { encodeFrameTx, type FrameFields, type FrameTxFields } from '../../../support/frames.js';
import {
  APPROVE_1,
  APPROVE_2,
  APPROVE_3,
  APPROVE_IF_SLOT0,
  CREATE2_FACTORY,
  INIT_APPROVE_3,
  nestedApprove,
  REVERTS,
  STOPS,
} from '../../../support/verify-code.js';
import { ONE_ETH, rejected, selfFrames, transfer, World } from './world.js';
import { EXPIRY as EXPIRY_VERIFIER } from '../frame-fields.js';

const sponsoredFrames = (sender: string, sponsor: string): FrameTxFields => ({
  sender,
  frames: [
    { mode: 1, flags: 2, executionGas: 20_000n },
    { mode: 1, flags: 1, target: sponsor, executionGas: 20_000n },
    { ...transfer, value: 0n },
  ],
  signatures: [],
  fees: [0n, 2_000_000_000n, 0n],
});

describe('protocol: a validation prefix run under the trace rules, over a world in memory', () => {
  let world: World;
  beforeEach(() => {
    world = new World();
  });
  const judged = async (fields: FrameTxFields) => (await world.judge(encodeFrameTx(fields))).verdict;
  const funded = (code: string) => world.put({ code, balance: ONE_ETH });

  it('admits an account whose code APPROVEs exactly what its self frame calls for, and reads its code', async () => {
    const sender = funded(APPROVE_3);
    expect(await judged(selfFrames(sender))).to.equal('valid');
    expect(world.reads).to.include(`code ${sender}`);
  });

  it('refuses a frame that reverts, one that stops without APPROVE, and one that grants the wrong scope', async () => {
    expect(await judged(selfFrames(funded(REVERTS)))).to.deep.equal(rejected(0, 'reverted'));
    expect(await judged(selfFrames(funded(STOPS)))).to.deep.equal(rejected(0, 'no APPROVE'));
    expect(await judged(selfFrames(funded(APPROVE_2)))).to.deep.equal(
      rejected(0, 'wrong APPROVE scope', 'granted 2, the frame calls for exactly 3'),
    );
  });

  it('admits [only, pay] whose sender approves execution and sponsor payment; refuses a pay frame approving beyond its scope', async () => {
    const sender = world.put({ code: APPROVE_2 });
    expect(await judged(sponsoredFrames(sender, funded(APPROVE_1)))).to.equal('valid');
    expect(await judged(sponsoredFrames(sender, funded(APPROVE_3)))).to.deep.equal(
      rejected(1, 'reverted', "APPROVE(3) beyond the frame's allowed scope 1"),
    );
  });

  it('refuses a sponsor that cannot pay the maximum cost as reverted', async () => {
    const sender = world.put({ code: APPROVE_2 });
    const sponsor = world.put({ code: APPROVE_1, balance: 0n });
    expect(await judged(sponsoredFrames(sender, sponsor))).to.deep.include({ frame: 1, cause: 'reverted' });
  });

  it("stops at the frame that grants payment: the frames after it are not the mempool's", async () => {
    const sender = funded(APPROVE_3);
    const reverter = world.put({ code: REVERTS });
    const fields = selfFrames(sender);
    fields.frames.push({ mode: 0, flags: 0, target: reverter, executionGas: 10_000n });
    expect(await judged(fields)).to.equal('valid');
    expect(world.reads).to.not.include(`code ${reverter}`);
  });

  it('takes the expiry frame as protocol code that approves nothing: [expiry, self] is valid', async () => {
    const fields = selfFrames(funded(APPROVE_3));
    fields.frames.unshift({ mode: 1, flags: 0, target: EXPIRY_VERIFIER, executionGas: 5_000n, data: '0x00000000ffffffff' });
    expect(await judged(fields)).to.equal('valid');
  });

  it("refuses a sender at the expiry verifier's address: its frame without a target is no expiry frame, and approves nothing", async () => {
    const fields = selfFrames(world.put({ balance: ONE_ETH }, EXPIRY_VERIFIER));
    expect(await judged(fields)).to.deep.equal(rejected(0, 'reverted'));
  });

  it('counts an APPROVE made in a nested call only while every call around it succeeds', async () => {
    expect(await judged(selfFrames(funded(nestedApprove(false))))).to.equal('valid');
    expect(await judged(selfFrames(funded(nestedApprove(true))))).to.deep.equal(rejected(0, 'no APPROVE'));
  });

  it("reads the sender's own slot, and judges by what is there", async () => {
    const closed = world.put({ code: APPROVE_IF_SLOT0, balance: ONE_ETH });
    const open = world.put({ code: APPROVE_IF_SLOT0, balance: ONE_ETH, slots: { [`0x${'00'.repeat(32)}`]: `0x${'00'.repeat(31)}01` } });
    expect(await judged(selfFrames(closed))).to.deep.equal(rejected(0, 'reverted'));
    expect(await judged(selfFrames(open))).to.equal('valid');
    expect(world.reads.filter((read) => read.startsWith('storage'))).to.have.length(2);
  });

  describe('a deploy frame', () => {
    const deploy = (factory: string, data = INIT_APPROVE_3): FrameFields => ({
      mode: 0,
      flags: 0,
      target: factory,
      executionGas: 70_000n,
      // EIP-8037: the code deposited, 1,530 a byte (the sender exists already: it is funded).
      stateGas: 1_530n * BigInt((APPROVE_3.length - 2) / 2),
      data,
    });

    it("admits [deploy, self]: the factory installs the account's code at the sender, which then approves", async () => {
      const factory = world.put({ code: CREATE2_FACTORY });
      const sender = world.put({ balance: ONE_ETH }, getCreate2Address(factory, `0x${'00'.repeat(32)}`, keccak256(INIT_APPROVE_3)));
      const fields = selfFrames(sender, 20_000n);
      fields.frames.unshift(deploy(factory));
      expect(await judged(fields)).to.equal('valid');
    });

    it('refuses one that installs code elsewhere too: a state change outside the sender', async () => {
      // CREATE2_FACTORY, then a second CREATE2 of the same init code with salt 1.
      const factory = world.put({ code: `${CREATE2_FACTORY.slice(0, -2)}6001365f5ff55000` });
      const sender = world.put({ balance: ONE_ETH }, getCreate2Address(factory, `0x${'00'.repeat(32)}`, keccak256(INIT_APPROVE_3)));
      const fields = selfFrames(sender, 10_000n);
      fields.frames.unshift({ ...deploy(factory), executionGas: 85_000n, stateGas: 250_000n });
      expect(await judged(fields)).to.deep.equal(rejected(0, 'state change outside the sender', undefined, 'deploy'));
    });

    it('refuses one that installs nothing at a sender that already has code, naming the deploy frame', async () => {
      const fields = selfFrames(funded(APPROVE_3), 20_000n);
      fields.frames.unshift({ mode: 0, flags: 0, target: world.put({ code: STOPS }), executionGas: 10_000n });
      const { verdict, progress } = await world.judge(encodeFrameTx(fields));
      expect(verdict).to.deep.equal(
        rejected(0, 'no code at the sender after deploy', 'the deploy frame installed none; the code there was already', 'deploy'),
      );
      expect(progress).to.deep.equal({ frame: 0, mode: 'deploy' });
    });
  });

  it('says where it was when something not a rule stops it: a budget spent before the pay frame, at frame 1', async () => {
    const sender = world.put({ code: APPROVE_2 });
    const sponsor = funded(APPROVE_1);
    const progress = { frame: 0, mode: 'VERIFY' as const };
    let checks = 0;
    const spent = new Error('over budget');
    // Checked before each frame (these codes neither loop nor call): frame 0's passes, frame 1's throws.
    const checkBudget = () => {
      if (++checks === 2) throw spent;
    };
    const thrown = await world.judge(encodeFrameTx(sponsoredFrames(sender, sponsor)), { checkBudget, progress }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(thrown).to.equal(spent);
    expect(progress).to.deep.equal({ frame: 1, mode: 'VERIFY' });
  });
});
