import { expect } from 'chai';
import { PaymasterTurns, WAITING_HEADS } from '../../../../plugins/gate/ledger/paymaster-turns.js';

const PAYMASTER = '0x00000000000000000000000000000000000f00d5';

describe("gate: turns at a paymaster's one pending slot (paymaster-turns.ts)", () => {
  it('makes the last holder yield while another source waits, for WAITING_HEADS heads', () => {
    const turns = new PaymasterTurns();
    expect(turns.yields(PAYMASTER, 'a', 100n), 'nobody held it').to.equal(false);
    turns.took(PAYMASTER, 'a');
    expect(turns.yields(PAYMASTER, 'a', 100n), 'held, nobody waits').to.equal(false);
    turns.waited(PAYMASTER, 'a', 100n);
    expect(turns.yields(PAYMASTER, 'a', 101n), 'only itself waited').to.equal(false);
    turns.waited(PAYMASTER, 'v', 100n);
    expect(turns.yields(PAYMASTER, 'a', 100n + WAITING_HEADS), 'another waits').to.equal(true);
    expect(turns.yields(PAYMASTER, 'v', 101n), 'the one waiting').to.equal(false);
    expect(turns.yields(PAYMASTER, 'a', 101n + WAITING_HEADS), 'the other stopped waiting').to.equal(false);
  });

  it('hands the turn on: whoever takes the slot stops waiting and becomes the one to yield', () => {
    const turns = new PaymasterTurns();
    turns.took(PAYMASTER, 'a');
    turns.waited(PAYMASTER, 'v', 100n);
    turns.took(PAYMASTER, 'v');
    turns.waited(PAYMASTER, 'a', 101n);
    expect(turns.yields(PAYMASTER, 'v', 102n)).to.equal(true);
    expect(turns.yields(PAYMASTER, 'a', 102n)).to.equal(false);
    expect(turns.yields('0x00000000000000000000000000000000000f00d6', 'v', 102n), 'another paymaster').to.equal(false);
  });
});
