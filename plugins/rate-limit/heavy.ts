/**
 * The price of a gas-heavy read (eth_call, eth_estimateGas, eth_createAccessList,
 * eth_simulateV1; src/call-gas.ts): one read token per `reads.gas_per_token` of the gas its
 * calls ask for, summed over eth_simulateV1's calls, a call naming no gas counted at the cap the
 * EL applies to it. size-limit records that sum (CALL_GAS) with its `rpc_gas_cap`; without
 * size-limit it is counted here with the EL's default cap, 50,000,000.
 *
 * `method_costs` of the method is the least it costs. One charge never exceeds the burst of the
 * class's buckets (a charge above it could never pass): the largest call is clamped to a whole
 * burst, rather than refused at load, because the gas cap is the EL's and size-limit's setting,
 * not rate-limit's. What bounds the EL time a source holds at once is its heavy slots
 * (`max_heavy_in_flight_per_source`).
 *
 * Gas is not time: a call reading cold state from disk costs an EL far more per gas than one
 * hashing in memory. Once the EL has answered, the source is charged for the EL time the answer
 * took (`reads.el_ms_per_token`, 5 ms a token: the shipped 300 tokens a second buy 1.5 EL-seconds
 * a second) beyond what it paid up front, as debt (what the tab is owed: never refused, its next
 * requests wait until it is earned back).
 */
import { CALL_GAS, DEFAULT_RPC_GAS_CAP, requestGas, type Facts, type RpcRequest } from '../../src/plugin.js';

/** What to tell the EL time of a read that paid `paid` tokens: `charge` takes the rest, if any. */
export function elTimeCharge(msPerToken: number, paid: number, charge: (tokens: number) => void): (ms: number) => void {
  return (ms) => {
    const owed = Math.ceil(ms / msPerToken) - paid;
    if (owed > 0) charge(owed);
  };
}

export function heavyCost(request: RpcRequest, facts: Facts, gasPerToken: bigint, least: number, burst: number): number {
  const gas = facts.get(CALL_GAS) ?? requestGas(request.method, request.params, DEFAULT_RPC_GAS_CAP);
  const tokens = (gas + gasPerToken - 1n) / gasPerToken;
  // Compared as bigints first: a gas beyond 2^53 must not round below the burst.
  return Math.min(Math.max(least, tokens < BigInt(burst) ? Number(tokens) : burst), burst);
}
