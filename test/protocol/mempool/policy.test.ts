/**
 * The public mempool's rules beyond validity: the expiry frame first, a recognised prefix shape,
 * the prefix within its gas budgets, and the facts they leave (payer, prefix end, prefix gas).
 */
import { expect } from 'chai';
import { checkStaticValidity } from '../../../protocol/frame-checks.js';
import { decodeFrameTransaction } from '../../../protocol/frame-codec.js';
import { checkFrameTransaction } from '../../../protocol/mempool/policy.js';
import { encodeFrameTx, type FrameFields, type FrameTxFields } from '../../../support/frames.js';
import { verdictOf } from '../../helpers/refusals.js';
import { expiry, LIMITS, OTHER, SENDER, SPONSOR, transfer } from '../frame-fields.js';

const check = (fields: FrameTxFields) => checkFrameTransaction(decodeFrameTransaction(encodeFrameTx(fields)), LIMITS);
const verdict = (mutate: (f: FrameTxFields) => void) => {
  const fields = transfer();
  mutate(fields);
  return verdictOf(() => check(fields));
};

describe("protocol: the public mempool's frame rules", () => {
  it("computes V3's gas figures: max_gas 122 790, payer the sender", () => {
    const v3 =
      '0x06f89b821fcd80947e5f4552091a69125d5dfcb7b8c2659029395bdfeaca010380c482c350808080de0280940000000000000000000000000000000000001234c482c350800180f848f846018080b841017a3519e066ec20068a5d05b0e66a1e17b29b98ae20535c8241dc09aa3a60f44a06cc4a99b41141d0be281cc1a0573c2c4dad116c7e67d98c3fa38c141c48fea8cb843b9aca00847735940080c0';
    const facts = checkFrameTransaction(decodeFrameTransaction(v3), LIMITS);
    expect(facts).to.deep.equal({
      payer: SENDER,
      maxGas: 122_790n,
      maxCost: 122_790n * 2_000_000_000n,
      executionReservation: 122_790n,
      stateReservation: 0n,
      deadline: undefined,
      prefixEnd: 0,
      prefixGas: 52_800n,
    });
  });

  it('names the sponsor as payer for an [only, pay] prefix', () => {
    const fields = transfer();
    fields.frames = [
      { mode: 1, flags: 2, executionGas: 30_000n },
      { mode: 1, flags: 1, target: SPONSOR, executionGas: 30_000n },
      { mode: 2, flags: 0, target: OTHER, executionGas: 50_000n },
    ];
    expect(check(fields).payer).to.equal(SPONSOR);
  });

  it('accepts [deploy, self] and an expiry frame at index 0', () => {
    const fields = transfer();
    fields.frames.unshift({ mode: 0, flags: 0, executionGas: 20_000n, data: '0x6000' });
    fields.frames.unshift(expiry());
    expect(check(fields).deadline).to.equal(0xffffffffn);
  });

  const cases: Array<[string, string, string, (f: FrameTxFields) => void]> = [
    [
      'a misplaced expiry frame',
      'expiry-invalid',
      'frame 2: the expiry frame must be frame 0',
      (f) => f.frames.push(expiry({ executionGas: 1n, data: '0x0000000000000001' })),
    ],
    [
      'no validation prefix',
      'prefix-shape',
      'frames must start with [self], [deploy, self], [only, pay] or [deploy, only, pay]',
      (f) => f.frames.reverse(),
    ],
    [
      '[only] without [pay]',
      'prefix-shape',
      'frames must start with [self], [deploy, self], [only, pay] or [deploy, only, pay]',
      (f) => (f.frames[0] = { mode: 1, flags: 2, executionGas: 30_000n }),
    ],
    [
      'a VERIFY frame after the payment grant',
      'prefix-shape',
      'frame 2: no VERIFY frame after the payment grant',
      (f) => f.frames.push({ mode: 1, flags: 0, target: OTHER, executionGas: 1n }),
    ],
    [
      'a prefix over the gas budget',
      'prefix-gas',
      'validation prefix needs 100001 gas, over the budget of 100000',
      (f) => (f.frames[0]!.executionGas = 97_201n),
    ],
    [
      "a prefix over the gas budget with the expiry frame's limit (it is part of the prefix)",
      'prefix-gas',
      'validation prefix needs 100001 gas, over the budget of 100000',
      (f) => {
        f.frames[0]!.executionGas = 92_201n;
        f.frames.unshift(expiry());
      },
    ],
    [
      'a deploy frame alone',
      'prefix-shape',
      'frames must start with [self], [deploy, self], [only, pay] or [deploy, only, pay]',
      (f) => (f.frames = [{ mode: 0, flags: 0, executionGas: 20_000n }]),
    ],
    [
      'a prefix over the state-gas budget',
      'prefix-gas',
      'validation prefix needs 500001 state gas, over the budget of 500000',
      (f) => (f.frames[0]!.stateGas = 500_001n),
    ],
  ];
  for (const [label, reason, detail, mutate] of cases) {
    it(`refuses ${label} with ${reason}`, () => {
      expect(verdict(mutate)).to.equal(`${reason}: ${detail}`);
    });
  }

  const accepted: Array<[string, (f: FrameTxFields) => void]> = [
    ['a prefix exactly at the gas budget', (f) => (f.frames[0]!.executionGas = 97_200n)],
    ['a prefix exactly at the state-gas budget', (f) => (f.frames[0]!.stateGas = 500_000n)],
  ];
  for (const [label, mutate] of accepted) {
    it(`accepts ${label}`, () => {
      expect(verdict(mutate)).to.equal('accepted');
    });
  }

  describe('the facts of each prefix shape', () => {
    const deployFrame: FrameFields = { mode: 0, flags: 0, executionGas: 20_000n, data: '0x6000' };
    const onlyPay = (f: FrameTxFields) =>
      f.frames.splice(0, 1, { mode: 1, flags: 2, executionGas: 30_000n }, { mode: 1, flags: 1, target: SPONSOR, executionGas: 30_000n });
    const factsOf = (mutate: (f: FrameTxFields) => void) => {
      const fields = transfer();
      mutate(fields);
      const { payer, deadline, prefixEnd, prefixGas } = check(fields);
      return { payer, deadline, prefixEnd, prefixGas };
    };

    it("[expiry, deploy, self]: the shape is matched after the expiry frame, whose limit the prefix's gas counts", () => {
      expect(factsOf((f) => f.frames.unshift(expiry(), deployFrame))).to.deep.equal({
        payer: SENDER,
        deadline: 0xffffffffn,
        prefixEnd: 2,
        prefixGas: 5_000n + 20_000n + 50_000n + 2_800n,
      });
    });

    it('[only, pay]: ends at pay, whose target pays', () => {
      expect(factsOf(onlyPay)).to.deep.equal({ payer: SPONSOR, deadline: undefined, prefixEnd: 1, prefixGas: 30_000n + 30_000n + 2_800n });
    });

    it('[deploy, only, pay], the deploy frame aimed at an address: ends at pay, whose target pays', () => {
      const aimed = { ...deployFrame, target: OTHER };
      expect(
        factsOf((f) => {
          onlyPay(f);
          f.frames.unshift(aimed);
        }),
      ).to.deep.equal({
        payer: SPONSOR,
        deadline: undefined,
        prefixEnd: 2,
        prefixGas: 20_000n + 30_000n + 30_000n + 2_800n,
      });
    });
  });
});

describe('protocol: what the mempool rules add to static validity (the devnet executor applies validity alone)', () => {
  const staticFacts = (fields: FrameTxFields) => checkStaticValidity(decodeFrameTransaction(encodeFrameTx(fields)), 8141n);

  it('takes what only the public-mempool rules refuse: the expiry frame second, no recognised prefix', () => {
    const fields = transfer();
    fields.frames.splice(1, 0, expiry());
    expect(staticFacts(fields).expiry).to.deep.equal({ index: 1, deadline: 0xffffffffn });
    expect(verdictOf(() => check(fields))).to.equal('expiry-invalid: frame 1: the expiry frame must be frame 0');
    const noPrefix = transfer();
    noPrefix.frames = [{ mode: 2, flags: 0, executionGas: 1_000n }];
    expect(staticFacts(noPrefix).expiry).to.equal(undefined);
    expect(verdictOf(() => check(noPrefix))).to.match(/^prefix-shape: /);
  });

  it('refuses what no block may hold: another chain id, a nonce at 2^64 - 1', () => {
    expect(verdictOf(() => staticFacts({ ...transfer(), chainId: 1n }))).to.equal('wrong-chain-id: chain id 1 is not 8141');
    expect(verdictOf(() => staticFacts({ ...transfer(), nonce: (1n << 64n) - 1n }))).to.equal(
      'nonce-max: nonce has max value: 18446744073709551615 cannot be incremented (EIP-2681)',
    );
  });
});
