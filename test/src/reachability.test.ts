import { expect } from 'chai';
import { createLogger } from '../../src/log.js';
import { Reachability } from '../../src/reachability.js';

describe('reachability: one line when an upstream stops answering, one when it is back (reachability.ts)', () => {
  const setup = () => {
    const lines: Array<Record<string, unknown>> = [];
    const reachability = new Reachability(
      createLogger('debug', (line) => {
        const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
        lines.push(rest);
      }),
      'execution layer',
    );
    return { lines, reachability };
  };

  it('says nothing while requests are answered', () => {
    const { lines, reachability } = setup();
    for (let i = 0; i < 3; i++) reachability.answered();
    expect(lines).to.deep.equal([]);
    expect(reachability.reachable).to.equal(true);
  });

  it('warns at the first failure only, with its cause (never an address), and once answered again with how long it was out', () => {
    const { lines, reachability } = setup();
    reachability.failed('ECONNREFUSED');
    reachability.failed('UND_ERR_HEADERS_TIMEOUT');
    expect(reachability.reachable).to.equal(false);
    reachability.answered();
    reachability.answered();
    expect(
      lines.map(({ down_ms: downMs, ...rest }) => ({ ...rest, timed: typeof downMs === 'number' || downMs === undefined })),
    ).to.deep.equal([
      { level: 'warn', msg: 'execution layer unreachable', cause: 'ECONNREFUSED', timed: true },
      { level: 'warn', msg: 'execution layer reachable again', timed: true },
    ]);
    expect(lines[1]!.down_ms).to.be.a('number');
  });
});
