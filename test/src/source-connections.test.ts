import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { defaultSource, peerSource, SourceConnections } from '../../src/source-connections.js';

/** A socket as far as the counter reads one: its peer, 'close', and destroy (which closes it). */
function socket(remoteAddress: string): Socket & { close(): void } {
  const emitter = new EventEmitter() as unknown as Socket & { close(): void; destroyed: boolean };
  Object.assign(emitter, {
    remoteAddress,
    destroyed: false,
    close: () => emitter.emit('close'),
    destroy: () => {
      emitter.destroyed = true;
      emitter.emit('close');
    },
  });
  return emitter;
}

const noOpinion = () => undefined;

describe('connections per source', () => {
  it('admits up to the limit from one source, refuses the next, and admits again once one closes', () => {
    const connections = new SourceConnections();
    const held = [socket('192.0.2.1'), socket('192.0.2.1')];
    for (const s of held) expect(connections.admit(s, 2, noOpinion)).to.equal(undefined);
    expect(connections.admit(socket('192.0.2.1'), 2, noOpinion)).to.equal('source');
    expect(connections.admit(socket('192.0.2.2'), 2, noOpinion)).to.equal(undefined);
    held[0]!.close();
    expect(connections.held('192.0.2.1')).to.equal(1);
    expect(connections.admit(socket('192.0.2.1'), 2, noOpinion)).to.equal(undefined);
  });

  it("counts by the chain's source, and never caps a peer it calls a trusted proxy", () => {
    const connections = new SourceConnections();
    const sourceOf = (address: string) => (address === '10.0.0.1' ? null : 'site');
    for (let i = 0; i < 5; i++) expect(connections.admit(socket('10.0.0.1'), 1, sourceOf)).to.equal(undefined);
    expect(connections.admit(socket('192.0.2.1'), 1, sourceOf)).to.equal(undefined);
    expect(connections.admit(socket('192.0.2.9'), 1, sourceOf)).to.equal('source');
    expect(connections.held('site')).to.equal(1);
  });

  it("lets a less busy source in at the total by closing the busiest source's connection idle longest", () => {
    const connections = new SourceConnections();
    const a = [0, 1, 2].map(() => socket('192.0.2.1'));
    for (const s of a) expect(connections.admit(s, 8, noOpinion, 4)).to.equal(undefined);
    const b = socket('192.0.2.2');
    expect(connections.admit(b, 8, noOpinion, 4)).to.equal(undefined);
    // a[0] serves a request, a[2] went idle before a[1]: a[2] is the idlest... unless a[1] idles longer.
    connections.busy(a[0]!);
    connections.busy(a[1]!);
    connections.idle(a[1]!);
    const c = socket('192.0.2.3');
    expect(connections.admit(c, 8, noOpinion, 4)).to.equal(undefined);
    expect(a.map((s) => s.destroyed)).to.deep.equal([false, false, true]);
    expect([connections.total, connections.held('192.0.2.1'), connections.held('192.0.2.3')]).to.deep.equal([4, 2, 1]);
  });

  it('turns a newcomer away at the total when it would hold as many as the busiest, or the busiest has none idle', () => {
    const connections = new SourceConnections();
    const a = [socket('192.0.2.1'), socket('192.0.2.1')];
    const b = [socket('192.0.2.2'), socket('192.0.2.2')];
    for (const s of [...a, ...b]) expect(connections.admit(s, 8, noOpinion, 4)).to.equal(undefined);
    // a and b hold 2 each: a third source taking one of a's would leave 1 and 1 beside b's 2.
    expect(connections.admit(socket('192.0.2.3'), 8, noOpinion, 4)).to.equal(undefined);
    expect(connections.total).to.equal(4);
    // Now 2, 1, 1: a fourth source's 1 would not be fewer than the busiest's 1 after.
    for (const s of b) connections.busy(s);
    expect(connections.admit(socket('192.0.2.4'), 8, noOpinion, 4)).to.equal('all');
    expect(connections.admit(socket('192.0.2.2'), 8, noOpinion, 4)).to.equal('all');
  });

  describe('at the total, on a clock the test moves', () => {
    let clock = 0;
    const at = () => clock;
    beforeEach(() => {
      clock = 0;
    });

    it('closes the connection whose last request ended longest ago, not the one admitted first', () => {
      const connections = new SourceConnections(at);
      const served = socket('192.0.2.1');
      connections.admit(served, 8, noOpinion, 3);
      clock = 10;
      const unused = socket('192.0.2.1');
      connections.admit(unused, 8, noOpinion, 3);
      connections.busy(served);
      clock = 100;
      connections.idle(served);
      connections.admit(socket('192.0.2.9'), 8, noOpinion, 3);
      clock = 200;
      expect(connections.admit(socket('192.0.2.3'), 8, noOpinion, 3)).to.equal(undefined);
      expect([served.destroyed, unused.destroyed]).to.deep.equal([false, true]);
    });

    it('closes the first of two idle alike, and one whose requests all ended, not one with a request still on', () => {
      const connections = new SourceConnections(at);
      const a = [socket('192.0.2.1'), socket('192.0.2.1'), socket('192.0.2.1')];
      for (const s of a) connections.admit(s, 8, noOpinion, 4);
      connections.busy(a[0]!);
      connections.busy(a[0]!);
      connections.idle(a[0]!);
      connections.admit(socket('192.0.2.2'), 8, noOpinion, 4);
      expect(connections.admit(socket('192.0.2.3'), 8, noOpinion, 4)).to.equal(undefined);
      expect(
        a.map((s) => s.destroyed),
        'a[0] has one request left',
      ).to.deep.equal([false, true, false]);
      connections.busy(a[2]!);
      expect(connections.admit(socket('192.0.2.4'), 8, noOpinion, 4), 'both busy').to.equal('all');
      clock = 5;
      connections.idle(a[0]!);
      clock = 7;
      connections.idle(a[2]!);
      expect(connections.admit(socket('192.0.2.4'), 8, noOpinion, 4), 'a[0] idle since 5, a[2] since 7').to.equal(undefined);
      expect(a.map((s) => s.destroyed)).to.deep.equal([true, true, false]);
    });

    it("takes from the busiest source wherever it stands, and only while the newcomer's source would still hold fewer", () => {
      const connections = new SourceConnections(at);
      connections.admit(socket('192.0.2.1'), 8, noOpinion, 5);
      const b = [0, 1, 2].map(() => socket('192.0.2.2'));
      for (const s of b) connections.admit(s, 8, noOpinion, 5);
      connections.admit(socket('192.0.2.3'), 8, noOpinion, 5);
      // 1, 3, 1: a connection of the 1-source takes one of the busiest's 3, leaving 2 and 2.
      expect(connections.admit(socket('192.0.2.3'), 8, noOpinion, 5)).to.equal(undefined);
      expect(b.filter((s) => s.destroyed)).to.have.length(1);
      // 1, 2, 2: another would hold 3 beside the busiest's 1 after: refused.
      expect(connections.admit(socket('192.0.2.3'), 8, noOpinion, 5)).to.equal('all');
    });

    it("never closes a trusted proxy's connections for a newcomer, and gives their count back when they close", () => {
      const connections = new SourceConnections(at);
      const proxyOf = (address: string) => (address === '10.0.0.1' ? null : undefined);
      const proxied = [0, 1, 2].map(() => socket('10.0.0.1'));
      for (const s of proxied) connections.admit(s, 1, proxyOf, 3);
      expect(connections.admit(socket('192.0.2.1'), 1, proxyOf, 3)).to.equal('all');
      proxied[0]!.close();
      expect(connections.total).to.equal(2);
      expect(connections.admit(socket('192.0.2.1'), 1, proxyOf, 3)).to.equal(undefined);
      expect(proxied.map((s) => s.destroyed)).to.deep.equal([false, false, false]);
    });

    it('ignores requests on a connection it never counted, and an idle without a request', () => {
      const connections = new SourceConnections(at);
      const stranger = socket('192.0.2.7');
      connections.busy(stranger);
      connections.idle(stranger);
      const s = socket('192.0.2.1');
      connections.admit(s, 8, noOpinion, 2);
      connections.admit(socket('192.0.2.1'), 8, noOpinion, 2);
      connections.idle(s);
      clock = 50;
      expect(connections.admit(socket('192.0.2.5'), 8, noOpinion, 2), 'an idle without a request changed nothing').to.equal(undefined);
      expect(s.destroyed).to.equal(true);
    });
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
