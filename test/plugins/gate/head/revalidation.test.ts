import { expect } from 'chai';
import { EXPIRY_VERIFIER } from '../../../../protocol/index.js';
import { keccak256 } from 'ethers';
import { encodeFrameTx, RECIPIENT, type FrameTxFields } from '../../../../support/frames.js';
import { call, rpc } from '../../../../support/http.js';
import { APPROVE_1, APPROVE_2, REVERTS } from '../../../../support/verify-code.js';
import { Refusal } from '../../../../plugins/gate/errors.js';
import { restsOnState } from '../../../../plugins/gate/head/revalidation.js';
import { useFrameIngress } from '../../../helpers/submit-target.js';
import { until } from '../../../helpers/until.js';

const ONE_ETH = '0xde0b6b3a7640000';
let addresses = 0;
const freshAddress = () => `0x${'00'.repeat(17)}4e${(addresses++).toString(16).padStart(4, '0')}`;

/** [only (the sender's code), pay (the paymaster), a transfer of nothing], creating the sender; an expiry frame first with a deadline. */
const sponsored = (sender: string, paymaster: string, deadline?: bigint): FrameTxFields => ({
  sender,
  frames: [
    ...(deadline === undefined
      ? []
      : [{ mode: 1, flags: 0, target: EXPIRY_VERIFIER, executionGas: 2_651n, data: `0x${deadline.toString(16).padStart(16, '0')}` }]),
    { mode: 1, flags: 2, executionGas: 20_000n },
    { mode: 1, flags: 1, target: paymaster, executionGas: 20_000n, stateGas: 183_600n },
    { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n },
  ],
  signatures: [],
  fees: [0n, 2_000_000_000n, 0n],
});

describe('gate: pending frame transactions revalidated at each new head (skip_after_blocks 3)', () => {
  // Blocks may lag their ordering here: an admitted transaction stays pending three heads.
  const suite = useFrameIngress('      skip_after_blocks: 3\n', 'metrics_listen: 127.0.0.1:0');
  const el = (method: string, params: unknown[]) => call(suite.anvil.url, method, params);
  const submit = async (raw: string) => JSON.parse((await rpc(suite.ingress.url, 'eth_sendRawTransaction', [raw])).text);
  const account = async (code: string, funded = true) => {
    const address = freshAddress();
    await el('anvil_setCode', [address, code]);
    if (funded) await el('anvil_setBalance', [address, ONE_ETH]);
    return address;
  };
  /** A funded paymaster with code, and two transactions of new senders it would pay for. */
  const twoSponsoredByOnePaymaster = async (firstDeadline?: bigint) => {
    const paymaster = await account(APPROVE_1);
    const first = encodeFrameTx(sponsored(await account(APPROVE_2, false), paymaster, firstDeadline));
    const second = encodeFrameTx(sponsored(await account(APPROVE_2, false), paymaster));
    await el('evm_mine', []);
    return { paymaster, first, second };
  };
  const released = () => suite.ingress.logs.filter((line) => line.includes('its reservation released'));
  /** svc_ingress_gate_revalidations_total{outcome} as /metrics shows it (0 before its first count). */
  const revalidations = async (outcome: string) => {
    const text = await (await fetch(`${suite.ingress.metricsUrl}/metrics`)).text();
    return Number(new RegExp(`^svc_ingress_gate_revalidations_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  };

  it("releases a pending transaction's paymaster once its code would now refuse it, before skip_after_blocks ends", async () => {
    const { paymaster, first, second } = await twoSponsoredByOnePaymaster();
    const releasedBefore = await revalidations('released');
    expect(await submit(first)).to.have.property('result', keccak256(first));
    expect((await submit(second)).error.data).to.deep.equal({ reason: 'paymaster-pending' });

    // The paymaster's code changes: at the next head the first would be refused, so it will be skipped.
    await el('anvil_setCode', [paymaster, REVERTS]);
    await el('evm_mine', []);
    const [line] = await until(
      async () => released(),
      (lines) => lines.length > 0,
      'the revalidation to release it',
    );
    expect(JSON.parse(line!)).to.include({ hash: keccak256(first), reason: 'verify-rejected' });
    expect(await revalidations('released')).to.equal(releasedBefore + 1);

    // Its slot is free one head after it was ordered, two before skip_after_blocks would have freed it.
    await el('anvil_setCode', [paymaster, APPROVE_1]);
    await el('evm_mine', []);
    expect(await submit(second)).to.have.property('result', keccak256(second));
    expect(suite.target.received).to.deep.equal([first, second]);
  });

  it('keeps a pending transaction whose reads did not change, or changed and still hold: no release', async () => {
    const { paymaster, first, second } = await twoSponsoredByOnePaymaster();
    const before = released().length;
    const looked = async () => (await revalidations('kept')) + (await revalidations('unchanged'));
    const [lookedBefore, releasedBefore] = [await looked(), await revalidations('released')];
    expect(await submit(first)).to.have.property('result', keccak256(first));
    // A new head, the paymaster's balance changed but still covers it: judged again, kept.
    await el('anvil_setBalance', [paymaster, '0xde0b6b3a7640001']);
    await el('evm_mine', []);
    await el('evm_mine', []);
    expect((await submit(second)).error.data, 'still pending two heads on').to.deep.equal({ reason: 'paymaster-pending' });
    expect(released()).to.have.length(before);
    // Looked at again (judged again if its reads changed), never released.
    await until(looked, (count) => count > lookedBefore, 'a revalidation at the new heads');
    expect(await revalidations('released')).to.equal(releasedBefore);
  });

  it('releases a pending transaction once a head reaches its expiry deadline: no later block can include it', async () => {
    const now = BigInt(((await el('eth_getBlockByNumber', ['latest', false])) as { timestamp: string }).timestamp);
    const { first, second } = await twoSponsoredByOnePaymaster(now + 100n);
    expect(await submit(first)).to.have.property('result', keccak256(first));
    expect((await submit(second)).error.data).to.deep.equal({ reason: 'paymaster-pending' });
    const before = released().length;
    await el('evm_mine', [`0x${(now + 100n).toString(16)}`]);
    const lines = await until(
      async () => released(),
      (all) => all.length > before,
      'the revalidation to release it',
    );
    expect(JSON.parse(lines.at(-1)!)).to.include({ hash: keccak256(first), reason: 'expired' });
    expect(await submit(second)).to.have.property('result', keccak256(second));
  });

  it('frees a reservation only on a verdict about state, never on a failure to judge', () => {
    const verify = (cause: string) => new Refusal('verify-rejected', `VERIFY frame 0: ${cause}`, { frame: 0, cause });
    expect(restsOnState(new Refusal('payer-balance', 'the payer cannot cover the maximum cost'))).to.equal(true);
    expect(restsOnState(verify('reverted'))).to.equal(true);
    expect(restsOnState(verify('not the canonical expiry verifier'))).to.equal(true);
    expect(restsOnState(verify('simulation error: TypeError'))).to.equal(false);
    expect(restsOnState(verify('over the simulation budget'))).to.equal(false);
    expect(restsOnState(new Refusal('gate-error', 'judging failed unexpectedly (TypeError)'))).to.equal(false);
  });
});
