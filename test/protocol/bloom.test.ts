import { expect } from 'chai';
import { keccak256, toUtf8Bytes } from 'ethers';
import { Bloom } from 'ox';
import { logsBloom } from '../../protocol/bloom.js';

describe('protocol: the logs bloom of a receipt', () => {
  const transfer = keccak256(toUtf8Bytes('Transfer(address,address,uint256)'));
  const logs = [
    { address: '0xfffffffffffffffffffffffffffffffffffffffe', topics: [transfer, `0x${'00'.repeat(12)}${'11'.repeat(20)}`] },
    { address: '0x00000000000000000000000000000000000f2a22', topics: [`0x${'2a'.padStart(64, '0')}`] },
  ];

  it('holds every address and topic of the logs, as ox reads a bloom', () => {
    const bloom = logsBloom(logs) as `0x${string}`;
    expect(Bloom.validate(bloom)).to.equal(true);
    for (const value of logs.flatMap((log) => [log.address, ...log.topics])) {
      expect(Bloom.contains(bloom, value as `0x${string}`), value).to.equal(true);
    }
    expect(Bloom.contains(bloom, `0x${'2b'.padStart(64, '0')}`)).to.equal(false);
  });

  it('is 256 zero bytes for no logs, and sets three bits per value at most', () => {
    expect(logsBloom([])).to.equal(`0x${'00'.repeat(256)}`);
    const bits = (hex: string) =>
      [...Buffer.from(hex.slice(2), 'hex')].reduce((n, byte) => n + byte.toString(2).replaceAll('0', '').length, 0);
    const one = logsBloom([{ address: logs[0]!.address, topics: [] }]);
    expect(bits(one)).to.be.within(1, 3);
  });
});
