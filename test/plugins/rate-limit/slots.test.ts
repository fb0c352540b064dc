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

  it('forgets the sources whose slots are all back once there are 1,024 entries, keeping those that hold one', () => {
    const slots = new Slots(1);
    const held = (slots as unknown as { held: Map<string, number> }).held;
    const holding = slots.take('holding');
    for (let i = 0; i < 1_023; i++) slots.take(`s${i}`)!();
    expect(held.size, 'kept at zero').to.equal(1_024);
    expect(slots.take('s0'), 'a source kept at zero takes its slot again').to.be.a('function');
    expect(held.size).to.equal(1_024);
    expect(slots.take('new')).to.be.a('function');
    expect([...held.keys()]).to.deep.equal(['holding', 's0', 'new']);
    expect(holding).to.be.a('function');
  });

  it('sweeps again only past twice what the last sweep kept: many sources holding slots are not scanned at each new one', () => {
    const slots = new Slots(1);
    const held = (slots as unknown as { held: Map<string, number> }).held;
    for (let i = 0; i < 1_500; i++) slots.take(`holding${i}`);
    for (let i = 0; i < 548; i++) slots.take(`s${i}`)!();
    expect(held.size, 'the sweep at 1,024 kept every source then: the next is at 2,048').to.equal(2_048);
    slots.take('next');
    expect(held.size).to.equal(1_501);
  });
});
