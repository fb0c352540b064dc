import { expect } from 'chai';
import { Slots } from '../../../plugins/rate-limit/slots.js';

describe('rate-limit: slots', () => {
  it('gives each source its own slots, up to the cap, and none past it', () => {
    const slots = new Slots(2);
    expect(slots.take('a')).to.be.a('function');
    expect(slots.take('a')).to.be.a('function');
    expect(slots.take('a')).to.equal(undefined);
    expect(slots.take('b')).to.be.a('function');
  });

  it('takes a slot back when it is released, once however often release is called', () => {
    const slots = new Slots(2);
    const first = slots.take('a')!;
    slots.take('a');
    first();
    first();
    expect(slots.take('a')).to.be.a('function');
    expect(slots.take('a')).to.equal(undefined);
  });

  it('forgets a source whose slots are all back', () => {
    const slots = new Slots(1);
    slots.take('a')!();
    const held = (slots as unknown as { held: Map<string, number> }).held;
    expect(held.size).to.equal(0);
  });
});
