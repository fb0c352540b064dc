import { expect } from 'chai';
import { forwardedWarning } from '../../../plugins/rate-limit/forwarded-warning.js';
import { createLogger } from '../../../src/log.js';

describe('rate-limit: the warning for forwarding headers from an untrusted peer (forwarded-warning.ts)', () => {
  const XFF = { 'x-forwarded-for': '198.51.100.7' };
  const setup = () => {
    const peers: unknown[] = [];
    let clock = 0;
    const warn = forwardedWarning(
      createLogger('warn', (line) => peers.push(JSON.parse(line).peer)),
      () => clock,
    );
    return { peers, warn, advance: (ms: number) => (clock += ms) };
  };
  const untrusted = () => false;

  it('tells each peer once, never a trusted one nor a request forwarding nothing', () => {
    const { peers, warn, advance } = setup();
    warn('192.0.2.1', XFF, () => true);
    warn('192.0.2.2', {}, untrusted);
    warn('192.0.2.3', XFF, untrusted);
    advance(60_000);
    warn('192.0.2.3', { forwarded: 'for=198.51.100.9' }, untrusted);
    expect(peers).to.deep.equal(['192.0.2.3']);
  });

  it('writes one line per 10 s at most, whatever the number of peers', () => {
    const { peers, warn, advance } = setup();
    for (let i = 0; i < 50; i++) warn(`192.0.2.${i}`, XFF, untrusted);
    advance(9_999);
    warn('192.0.2.100', XFF, untrusted);
    advance(1);
    warn('192.0.2.101', XFF, untrusted);
    expect(peers).to.deep.equal(['192.0.2.0', '192.0.2.101']);
  });
});
