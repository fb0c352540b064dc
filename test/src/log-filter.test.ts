import { expect } from 'chai';
import { isLogFilterError, matchesLog, readLogFilter, type LogFilter } from '../../src/log-filter.js';

const A = `0x${'aa'.repeat(20)}`;
const B = `0x${'bb'.repeat(20)}`;
const T1 = `0x${'11'.repeat(32)}`;
const T2 = `0x${'22'.repeat(32)}`;
const T3 = `0x${'33'.repeat(32)}`;

function filter(raw: unknown): LogFilter {
  const read = readLogFilter(raw);
  if (isLogFilterError(read)) throw new Error(read.message);
  return read;
}

const log = (address: string, topics: string[], blockNumber = 10n) => ({ address, topics, blockNumber });

describe("log filter: a logs subscription's criteria as geth reads and matches them (log-filter.ts)", () => {
  it('matches by address, one or any of a list, case-insensitively; no address or an empty list is any', () => {
    expect(matchesLog(filter({ address: A }), log(A.toUpperCase().replace('0X', '0x'), []))).to.equal(true);
    expect(matchesLog(filter({ address: [A, B] }), log(B, []))).to.equal(true);
    expect(matchesLog(filter({ address: [A] }), log(B, []))).to.equal(false);
    expect(matchesLog(filter({}), log(B, [T1]))).to.equal(true);
    expect(matchesLog(filter({ address: [] }), log(B, []))).to.equal(true);
    expect(matchesLog(filter(undefined), log(B, []))).to.equal(true);
  });

  it('matches topics by position: null or [] any, a string that one, a list any of them; fewer topics than positions never', () => {
    const cases: Array<[unknown[], string[], boolean]> = [
      [[T1], [T1, T2], true],
      [[T2], [T1, T2], false],
      [[null, T2], [T1, T2], true],
      [[[], T2], [T3, T2], true],
      [
        [
          [T1, T3],
          [T2, T3],
        ],
        [T3, T2],
        true,
      ],
      [
        [
          [T1, T3],
          [T2, T3],
        ],
        [T2, T2],
        false,
      ],
      [[[T1, null, T3]], [T2], true],
      [[T1, null], [T1], false],
      [[], [], true],
    ];
    for (const [topics, logged, expected] of cases) {
      expect(matchesLog(filter({ topics }), log(A, logged)), JSON.stringify(topics)).to.equal(expected);
    }
  });

  it('reads keys case-insensitively, as Go does', () => {
    const read = filter({ Address: A, TOPICS: [T1] });
    expect(matchesLog(read, log(B, [T1]))).to.equal(false);
    expect(matchesLog(read, log(A, [T1]))).to.equal(true);
  });

  it('takes fromBlock/toBlock as geth subscriptions do: latest, numbers in order, a number then latest', () => {
    const ranged = filter({ fromBlock: '0xa', toBlock: '0xc' });
    expect([9n, 10n, 12n, 13n].map((n) => matchesLog(ranged, log(A, [], n)))).to.deep.equal([false, true, true, false]);
    const open = filter({ fromBlock: '0xa', toBlock: 'latest' });
    expect([9n, 1000n].map((n) => matchesLog(open, log(A, [], n)))).to.deep.equal([false, true]);
    expect(matchesLog(filter({ fromBlock: 'latest' }), log(A, [], 1n))).to.equal(true);
  });

  it("refuses what geth refuses, with geth's words", () => {
    const refusals: Array<[unknown, 'argument' | 'criteria', string]> = [
      [{ address: 'aa' }, 'argument', 'invalid address: hex string without 0x prefix'],
      [{ address: '0xaa' }, 'argument', 'invalid address: hex has invalid length 1 after decoding; expected 20 for address'],
      [{ address: [A, 7] }, 'argument', 'non-string address at index 1'],
      [{ address: [A, '0xzz'] }, 'argument', 'invalid address at index 1: invalid hex string'],
      [{ address: 7 }, 'argument', 'invalid addresses in query'],
      [{ topics: [7] }, 'argument', 'invalid topic(s)'],
      [{ topics: [[T1, 7]] }, 'argument', 'invalid topic(s)'],
      [{ topics: ['0x1'] }, 'argument', 'hex string of odd length'],
      [{ topics: ['0x11'] }, 'argument', 'hex has invalid length 1 after decoding; expected 32 for topic'],
      [{ blockHash: T1, fromBlock: '0x1' }, 'argument', "can't specify fromBlock/toBlock with blockHash"],
      [{ fromBlock: '12' }, 'argument', 'hex string without 0x prefix'],
      [{ topics: [null, null, null, null, null] }, 'criteria', 'exceed max topics'],
      [{ address: Array.from({ length: 1001 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`) }, 'criteria', 'exceed max addresses'],
      [{ fromBlock: 'pending' }, 'criteria', 'pending logs are not supported'],
      [{ fromBlock: '0x5', toBlock: '0x4' }, 'criteria', 'invalid block range params'],
      [{ fromBlock: 'latest', toBlock: '0x4' }, 'criteria', 'invalid block range params'],
      [{ fromBlock: 'finalized' }, 'criteria', 'invalid block range params'],
    ];
    for (const [raw, kind, message] of refusals) {
      expect(readLogFilter(raw), JSON.stringify(raw).slice(0, 80)).to.deep.equal({ kind, message });
    }
  });
});
