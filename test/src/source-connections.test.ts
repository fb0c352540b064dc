import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { defaultSource, peerSource, SourceConnections } from '../../src/source-connections.js';

/** A socket as far as the counter reads one: its peer, and 'close'. */
function socket(remoteAddress: string): Socket & { close(): void } {
  const emitter = new EventEmitter() as unknown as Socket & { close(): void };
  Object.assign(emitter, { remoteAddress, close: () => emitter.emit('close') });
  return emitter;
}

const noOpinion = () => undefined;

describe('connections per source', () => {
  it('admits up to the limit from one source, refuses the next, and admits again once one closes', () => {
    const connections = new SourceConnections();
    const held = [socket('192.0.2.1'), socket('192.0.2.1')];
    for (const s of held) expect(connections.admit(s, 2, noOpinion)).to.equal(true);
    expect(connections.admit(socket('192.0.2.1'), 2, noOpinion)).to.equal(false);
    expect(connections.admit(socket('192.0.2.2'), 2, noOpinion)).to.equal(true);
    held[0]!.close();
    expect(connections.held('192.0.2.1')).to.equal(1);
    expect(connections.admit(socket('192.0.2.1'), 2, noOpinion)).to.equal(true);
  });

  it("counts by the chain's source, and never caps a peer it calls a trusted proxy", () => {
    const connections = new SourceConnections();
    const sourceOf = (address: string) => (address === '10.0.0.1' ? null : 'site');
    for (let i = 0; i < 5; i++) expect(connections.admit(socket('10.0.0.1'), 1, sourceOf)).to.equal(true);
    expect(connections.admit(socket('192.0.2.1'), 1, sourceOf)).to.equal(true);
    expect(connections.admit(socket('192.0.2.9'), 1, sourceOf)).to.equal(false);
    expect(connections.held('site')).to.equal(1);
  });

  it('groups IPv6 by /64 and IPv4-mapped IPv6 as IPv4 when the chain names no source', () => {
    expect(defaultSource('2001:db8:1:2:aaaa::1')).to.equal('2001:db8:1:2::/64');
    expect(defaultSource('2001:db8:1:2:bbbb::9')).to.equal('2001:db8:1:2::/64');
    expect(defaultSource('::ffff:192.0.2.7')).to.equal('192.0.2.7');
    expect(defaultSource('192.0.2.7')).to.equal('192.0.2.7');
    expect(defaultSource('')).to.equal('');
  });

  it("names a peer's source as every per-peer count does: the chain's name, null for a trusted proxy, else the address by /64", () => {
    expect(peerSource('192.0.2.1', () => 'site')).to.equal('site');
    expect(peerSource('10.0.0.1', () => null)).to.equal(null);
    expect(peerSource('2001:db8:1:2::9', noOpinion)).to.equal('2001:db8:1:2::/64');
  });
});
