import { expect } from 'chai';
import { HeadFeed } from '../../src/head-feed.js';
import { Upstream } from '../../src/upstream.js';
import { call } from '../../support/http.js';
import { useAnvil } from '../helpers/el.js';

describe('head feed: one follower of the EL for every newHeads subscriber (head-feed.ts)', () => {
  const anvil = useAnvil();

  /** Polls `until` every 20 ms, at most 5 s. */
  const eventually = async (until: () => boolean, what: string) => {
    for (let i = 0; !until(); i++) {
      if (i > 250) throw new Error(`${what}: not within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('announces every block after the first it saw, in order, blocks mined together included, and stops asking once nobody listens', async () => {
    const el = new Upstream({ url: anvil.current.url, connections: 2, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
    const feed = new HeadFeed(() => el, 20);
    const numbers: bigint[] = [];
    const headers: Array<Record<string, unknown>> = [];
    const stop = feed.subscribe((header) => {
      const parsed = JSON.parse(header) as Record<string, unknown>;
      headers.push(parsed);
      numbers.push(BigInt(parsed.number as string));
    });
    try {
      // Until the feed has seen a head: blocks before its first poll are not announced.
      for (let i = 0; numbers.length === 0; i++) {
        if (i > 100) throw new Error('no block announced within 5 s');
        await call(anvil.current.url, 'anvil_mine', ['0x1']);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const head = BigInt(await call<string>(anvil.current.url, 'eth_blockNumber'));
      await eventually(() => numbers.at(-1) === head, 'the head announced');
      const seen = numbers.length;
      const from = head;
      await call(anvil.current.url, 'anvil_mine', ['0x5']);
      await eventually(() => numbers.length >= seen + 5, 'five blocks mined at once');
      expect(numbers.slice(seen)).to.deep.equal([1n, 2n, 3n, 4n, 5n].map((n) => from + n));
      expect(headers.at(-1)).to.not.have.any.keys('transactions', 'uncles', 'size');
    } finally {
      stop();
      await el.close();
    }
    expect(feed.size).to.equal(0);
  });
});
