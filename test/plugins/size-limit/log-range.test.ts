import { expect } from 'chai';
import { blockSpanOf } from '../../../plugins/size-limit/log-range.js';

describe("size-limit: an eth_getLogs filter's block span (log-range.ts)", () => {
  let asked = 0;
  const head = async () => {
    asked++;
    return 0x3e8n;
  };
  const span = async (filter: unknown) => blockSpanOf([filter], head);
  beforeEach(() => (asked = 0));

  it('counts both ends, from numbers alone without asking the head', async () => {
    expect(await span({ fromBlock: '0x1', toBlock: '0x2710' })).to.equal(10_000n);
    expect(await span({ fromBlock: '0x5', toBlock: '0x5' })).to.equal(1n);
    expect(asked).to.equal(0);
  });

  it('reads "earliest" as 0, the other tags and a missing bound as the head', async () => {
    expect(await span({ fromBlock: 'earliest' })).to.equal(1001n);
    expect(await span({ fromBlock: '0x3e0', toBlock: 'finalized' })).to.equal(9n);
    expect(await span({ fromBlock: 'earliest', toBlock: 'pending' })).to.equal(1001n);
    expect(asked).to.equal(3);
    expect(blockSpanOf([{}], head), 'the head alone: one block, unasked').to.equal(1n);
    expect(blockSpanOf([{ fromBlock: 'safe', toBlock: 'latest' }], head)).to.equal(1n);
    expect(asked).to.equal(3);
  });

  it('reads the keys as geth does, whatever their case', async () => {
    expect(await span({ FROMBLOCK: '0x0', ToBlock: '0x63' })).to.equal(100n);
  });

  it('leaves to the EL what it judges itself: a block hash, from after to, a bound it cannot read, a key twice', async () => {
    expect(await span({ blockHash: `0x${'11'.repeat(32)}`, fromBlock: 'earliest' })).to.equal(undefined);
    expect(await span({ fromBlock: '0x10', toBlock: '0x1' })).to.equal(undefined);
    expect(await span({ fromBlock: 7, toBlock: '0x1' })).to.equal(undefined);
    expect(await span({ fromBlock: '0x0', FromBlock: '0x5', toBlock: '0x9' })).to.equal(undefined);
    expect(blockSpanOf('not a list', head)).to.equal(undefined);
  });
});
