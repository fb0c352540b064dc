import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { codeHashOf } from '../../../../protocol/index.js';
import {
  compactDependencies,
  DEPENDENCY_KEYS_MAX_CHARS,
  stillHolds,
  type CachedDependencies,
  type StateDependencies,
} from '../../../../plugins/gate/head/dependencies.js';
import { HeadState, type Head } from '../../../../plugins/gate/head/state.js';
import { Upstream } from '../../../../src/upstream.js';
import { startStubEl, type StubEl } from '../../../../support/stub-el.js';
import { within } from '../../../../support/within.js';

const SENDER = `0x${'11'.repeat(20)}`;
const SPONSOR = `0x${'22'.repeat(20)}`;
const ACCOUNT_CODE = '0x6001600055';
const SLOT = `0x${'00'.repeat(31)}01`;
const WORD = `0x${'00'.repeat(31)}2a`;
const head = (number: bigint): Head => ({ number, baseFee: 7n, timestamp: 1_700_000_000n, coinbase: `0x${'00'.repeat(20)}` });

const answer = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });

/** What a refusal judged at head 100 read: the sender's and sponsor's accounts, both codes, one sender slot. */
const DEPENDENCIES: StateDependencies = {
  accounts: [
    [SENDER, '7', '1000000000000000000'],
    [SPONSOR, '0', '5'],
  ],
  codes: [
    [SENDER, keccak256(ACCOUNT_CODE)],
    [SPONSOR, '0x'],
  ],
  slots: [[SENDER, SLOT, WORD]],
};

describe("gate: a refusal's state dependencies", () => {
  let el: StubEl;
  let upstream: Upstream;
  /** The EL's state, as hex strings; tests change it. */
  let nonces: Record<string, string>;
  let balances: Record<string, string>;
  let codes: Record<string, string>;
  let words: Record<string, string>;

  const holds = (deps: CachedDependencies, at = head(101n)) =>
    within(5_000, 'stillHolds', stillHolds(deps, new HeadState(upstream, 60_000), at));

  before(async () => {
    const of = (params: unknown, i: number) => (params as string[])[i]!;
    el = await startStubEl({
      eth_getTransactionCount: (id, params) => answer(id, nonces[of(params, 0)] ?? '0x0'),
      eth_getBalance: (id, params) => answer(id, balances[of(params, 0)] ?? '0x0'),
      eth_getCode: (id, params) => answer(id, codes[of(params, 0)] ?? '0x'),
      eth_getStorageAt: (id, params) => answer(id, words[`${of(params, 0)}:${of(params, 1)}`] ?? `0x${'00'.repeat(32)}`),
    });
    upstream = new Upstream({ url: el.url, connections: 4, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
  });
  after(async () => {
    await upstream?.close();
    await el?.close();
  });
  beforeEach(() => {
    el.received.length = 0;
    nonces = { [SENDER]: '0x7' };
    balances = { [SENDER]: '0xde0b6b3a7640000', [SPONSOR]: '0x5' };
    codes = { [SENDER]: ACCOUNT_CODE };
    words = { [`${SENDER}:${SLOT}`]: WORD };
  });

  it('codeHashOf: keccak-256 of the code, and 0x for no code', () => {
    expect([codeHashOf(ACCOUNT_CODE), codeHashOf('0x')]).to.deep.equal([keccak256(ACCOUNT_CODE), '0x']);
  });

  for (const [form, deps] of [
    ['as read', DEPENDENCIES],
    ['as the verdict cache keeps them: keys and a digest', compactDependencies(DEPENDENCIES)!],
  ] as const) {
    describe(form, () => {
      it('holds at a later head where every account, code and slot reads the same', async () => {
        expect(await holds(deps)).to.equal(true);
      });

      it('reads each dependency once, at the head asked about', async () => {
        await holds(deps, head(0x1234n));
        const asked = el.received.map((r) => [r.method, r.params]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
        expect(asked).to.deep.equal(
          [
            ['eth_getBalance', [SENDER, '0x1234']],
            ['eth_getBalance', [SPONSOR, '0x1234']],
            ['eth_getCode', [SENDER, '0x1234']],
            ['eth_getCode', [SPONSOR, '0x1234']],
            ['eth_getStorageAt', [SENDER, SLOT, '0x1234']],
            ['eth_getTransactionCount', [SENDER, '0x1234']],
            ['eth_getTransactionCount', [SPONSOR, '0x1234']],
          ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
        );
      });

      it('holds for an EL that writes code and words in upper case', async () => {
        codes = { [SENDER]: ACCOUNT_CODE.toUpperCase().replace('0X', '0x') };
        words = { [`${SENDER}:${SLOT}`]: WORD.toUpperCase().replace('0X', '0x') };
        expect(await holds(deps)).to.equal(true);
      });

      it('holds trivially with nothing read, reading nothing', async () => {
        expect(
          await holds(
            form === 'as read' ? { accounts: [], codes: [], slots: [] } : compactDependencies({ accounts: [], codes: [], slots: [] })!,
          ),
        ).to.equal(true);
        expect(el.received).to.deep.equal([]);
      });

      describe('no longer holds once one of them changed', () => {
        for (const [label, change] of [
          ["the sender's nonce", () => (nonces[SENDER] = '0x8')],
          ["the sender's balance, by one wei", () => (balances[SENDER] = '0xde0b6b3a7640001')],
          ["the sponsor's balance", () => (balances[SPONSOR] = '0x4')],
          ["the sponsor's nonce", () => (nonces[SPONSOR] = '0x1')],
          ["the sender's code", () => (codes[SENDER] = '0x6002600055')],
          ["the sender's code, removed", () => delete codes[SENDER]],
          ['code at the code-less sponsor', () => (codes[SPONSOR] = `0xef0100${'33'.repeat(20)}`)],
          ["the sender's slot", () => (words[`${SENDER}:${SLOT}`] = `0x${'00'.repeat(31)}2b`)],
          ["the sender's slot, cleared", () => delete words[`${SENDER}:${SLOT}`]],
        ] as const) {
          it(label, async () => {
            change();
            expect(await holds(deps)).to.equal(false);
          });
        }
      });
    });
  }

  it('keeps of them the keys (slots without leading zeros) and keccak-256 of the values in canonical JSON', () => {
    expect(compactDependencies(DEPENDENCIES)).to.deep.equal({
      accounts: `${SENDER},${SPONSOR}`,
      codes: `${SENDER},${SPONSOR}`,
      slots: [[SENDER, '0x1']],
      digest: keccak256(
        Buffer.from(
          JSON.stringify([
            [
              ['7', '1000000000000000000'],
              ['0', '5'],
            ],
            [keccak256(ACCOUNT_CODE), '0x'],
            [WORD],
          ]),
        ),
      ),
    });
    const digest = compactDependencies(DEPENDENCIES)!;
    expect(compactDependencies(digest)).to.equal(digest);
  });

  it('keeps none when the keys alone pass the bound: 47 slots of 32 bytes', () => {
    const wide = (count: number): StateDependencies => ({
      accounts: [],
      codes: [],
      slots: Array.from({ length: count }, (_, i) => [SENDER, `0x${'f'.repeat(60)}${i.toString(16).padStart(4, '0')}`, WORD] as const),
    });
    // The keys as kept: each slot 66 characters and a comma.
    const keys = (count: number) =>
      JSON.stringify({
        accounts: '',
        codes: '',
        slots: [
          [
            SENDER,
            wide(count)
              .slots.map(([, slot]) => slot)
              .join(','),
          ],
        ],
      }).length;
    let fits = 0;
    while (keys(fits + 1) <= DEPENDENCY_KEYS_MAX_CHARS) fits++;
    expect(fits).to.equal(22);
    expect(compactDependencies(wide(fits))).to.not.equal(undefined);
    expect(compactDependencies(wide(fits + 1))).to.equal(undefined);
    expect(compactDependencies(wide(47))).to.equal(undefined);
  });
});
