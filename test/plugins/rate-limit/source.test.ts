import { expect } from 'chai';
import { createSourceResolver, parseCidrs } from '../../../plugins/rate-limit/source.js';

describe('rate-limit: the source of a request', () => {
  const untrusting = createSourceResolver([]);
  const behindProxies = createSourceResolver(parseCidrs(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']));

  it('is the TCP peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(untrusting('203.0.113.7', '198.51.100.1')).to.equal('203.0.113.7');
  });

  it('treats IPv4-mapped IPv6 peers as IPv4', () => {
    expect(untrusting('::ffff:203.0.113.7', undefined)).to.equal('203.0.113.7');
  });

  it('groups IPv6 sources by /48 by default: a site cannot rotate through its 65,536 /64s', () => {
    expect(untrusting('2001:db8:1:2:aaaa::1', undefined)).to.equal('2001:db8:1::/48');
    expect(untrusting('2001:db8:1:ffff:bbbb::9', undefined)).to.equal('2001:db8:1::/48');
    expect(untrusting('2001:db8:2::1', undefined)).to.equal('2001:db8:2::/48');
  });

  it('groups IPv6 sources by the configured prefix (ipv6_source_prefix), down to /64', () => {
    const by64 = createSourceResolver([], 64);
    expect(by64('2001:db8:1:2:aaaa::1', undefined)).to.equal('2001:db8:1:2::/64');
    expect(by64('2001:db8:1:3::1', undefined)).to.equal('2001:db8:1:3::/64');
    expect(createSourceResolver([], 56)('2001:db8:1:2ff:aaaa::1', undefined)).to.equal('2001:db8:1:200::/56');
  });

  it('believes X-Forwarded-For from a trusted proxy, walking from the right past trusted hops', () => {
    expect(behindProxies('127.0.0.1', '198.51.100.1, 203.0.113.9, 10.1.2.3')).to.equal('203.0.113.9');
  });

  it('ignores what a client prepends: only the hop the trusted proxy saw counts', () => {
    // The client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the real peer.
    expect(behindProxies('127.0.0.1', '1.1.1.1, 203.0.113.9')).to.equal('203.0.113.9');
  });

  it('joins repeated X-Forwarded-For headers', () => {
    expect(behindProxies('127.0.0.1', ['198.51.100.1', '203.0.113.9'])).to.equal('203.0.113.9');
  });

  it('stops at a hop that does not parse, keeping the last trusted one', () => {
    expect(behindProxies('127.0.0.1', '203.0.113.9, not-an-ip, 10.0.0.1')).to.equal('10.0.0.1');
  });

  it('reads hops written with a port, as some cloud balancers write them', () => {
    expect(behindProxies('127.0.0.1', '198.51.100.1, 203.0.113.9:5678')).to.equal('203.0.113.9');
    expect(behindProxies('127.0.0.1', '203.0.113.9:5678, 10.1.2.3:443')).to.equal('203.0.113.9');
    expect(behindProxies('127.0.0.1', '[2001:db8:7::1]:443')).to.equal('2001:db8:7::/48');
    expect(behindProxies('127.0.0.1', '[2001:db8:7::1]')).to.equal('2001:db8:7::/48');
    expect(behindProxies('127.0.0.1', '2001:db8:7::1')).to.equal('2001:db8:7::/48');
  });

  it('still stops at a hop whose port does not parse', () => {
    expect(behindProxies('127.0.0.1', '203.0.113.9:99999999, 10.0.0.1')).to.equal('10.0.0.1');
    expect(behindProxies('127.0.0.1', '203.0.113.9:, 10.0.0.1')).to.equal('10.0.0.1');
  });

  it('uses the trusted proxy itself when the header is absent', () => {
    expect(behindProxies('10.9.9.9', undefined)).to.equal('10.9.9.9');
  });

  it('refuses a malformed trusted range at start', () => {
    expect(() => parseCidrs(['10.0.0.0/33'])).to.throw();
  });
});
