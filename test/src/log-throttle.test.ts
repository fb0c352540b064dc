import { expect } from 'chai';
import { createLogger } from '../../src/log.js';
import { throttledWarning } from '../../src/log-throttle.js';

describe('throttled warnings', () => {
  it('logs the first occurrence at once, then one line per window with the count since the last', () => {
    const lines: Array<Record<string, unknown>> = [];
    let clock = 1_000;
    const warn = throttledWarning(
      createLogger('info', (line) => lines.push(JSON.parse(line))),
      'refused',
      10_000,
      () => clock,
    );
    warn({ peer: 'a' });
    for (let i = 0; i < 99; i++) warn({ peer: 'b' });
    expect(lines.map(({ msg, peer, count }) => ({ msg, peer, count }))).to.deep.equal([{ msg: 'refused', peer: 'a', count: 1 }]);
    clock += 10_000;
    warn({ peer: 'c' });
    expect(lines.map(({ level, peer, count }) => ({ level, peer, count }))).to.deep.equal([
      { level: 'warn', peer: 'a', count: 1 },
      { level: 'warn', peer: 'c', count: 100 },
    ]);
  });
});
