import { expect } from 'chai';
import { Notifier, type NotificationTarget } from '../../src/notifier.js';

/** A connection that records what it is sent, and in which order across connections. */
function target(name: string, log: string[], buffered = 0): NotificationTarget {
  return { send: (text) => void log.push(`${name} ${text}`), bufferedAmount: buffered, open: true };
}

/** Resolves once `until` holds, checking at each event-loop turn (at most 10,000). */
async function turnsUntil(until: () => boolean): Promise<void> {
  for (let i = 0; !until(); i++) {
    if (i > 10_000) throw new Error('not within 10,000 turns');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('notifier: what subscriptions are owed, sent round-robin by source (notifier.ts)', () => {
  it("sends each connection's notifications in order, prefix + text + }}", async () => {
    const sent: string[] = [];
    const outbox = new Notifier().outbox('a', target('a', sent), 1 << 20, () => {});
    outbox.push('{"p":', ['1', '2']);
    outbox.push('{"q":', ['3']);
    await turnsUntil(() => sent.length === 3);
    expect(sent).to.deep.equal(['a {"p":1}}', 'a {"p":2}}', 'a {"q":3}}']);
  });

  it('serves a source owed one notification within a turn of another owed 100,000', async () => {
    const sent: string[] = [];
    const notifier = new Notifier();
    const flood = notifier.outbox('attacker', target('attacker', sent), 1 << 30, () => {});
    const victim = notifier.outbox('victim', target('victim', sent), 1 << 20, () => {});
    flood.push(
      '',
      Array.from({ length: 100_000 }, (_, i) => String(i)),
    );
    await turnsUntil(() => sent.length > 0);
    const sentBefore = sent.length;
    victim.push('', ['head']);
    await turnsUntil(() => sent.includes('victim head}}'));
    // Once the victim is owed something, the attacker gets one turn (16) at most before it.
    expect(sent.indexOf('victim head}}') - sentBefore).to.be.at.most(16);
    expect(sentBefore, 'the attacker was being served').to.be.below(100_000);
    await turnsUntil(() => sent.length === 100_001);
  });

  it('empties and closes a connection owed more than its cap, sending it nothing more', async () => {
    const sent: string[] = [];
    let overflowed = 0;
    const outbox = new Notifier().outbox('a', target('a', sent, 900), 1_000, () => overflowed++);
    outbox.push('', ['x'.repeat(50)]);
    outbox.push('', ['y'.repeat(50)]);
    expect(overflowed).to.equal(1);
    outbox.push('', ['z']);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).to.deep.equal([]);
    expect(outbox.empty).to.equal(true);
  });
});
