/**
 * The gas a call-type read asks the EL to burn (issue 25, item 3). `eth_call`,
 * `eth_estimateGas` and `eth_createAccessList` run one call object (their first param);
 * `eth_simulateV1` runs every call of every block of its first param. The EL gives a call that
 * names no gas its own cap (geth and reth: `--rpc.gascap`, 50,000,000 by default), so such a call
 * asks for the cap.
 *
 * size-limit refuses what is over the caps and records the request's gas (CALL_GAS) for
 * rate-limit, which prices it; the server streams these methods on the EL connections kept for
 * them (`upstreams.heavy_connections`), so that they never hold the ones other reads use.
 */

/** The methods that run EVM code with a caller-chosen gas, and where their gas sits. */
export const CALL_METHODS = ['eth_call', 'eth_estimateGas', 'eth_createAccessList'] as const;
export const SIMULATE_METHOD = 'eth_simulateV1';
/** Every method whose work is EVM execution at the caller's gas: priced by gas, streamed apart. */
export const GAS_HEAVY_METHODS: ReadonlySet<string> = new Set([...CALL_METHODS, SIMULATE_METHOD, 'svc_estimateFrameGas']);
/** geth's and reth's default `--rpc.gascap`: what a call naming no gas gets when nothing else is configured. */
export const DEFAULT_RPC_GAS_CAP = 50_000_000n;

const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
/** The least gas a transaction can use: an estimate naming less searches as if it named none (geth). */
const TRANSFER_GAS = 21_000n;

/**
 * A JSON key as geth matches it to a field: case-insensitively, with Unicode's simple folding
 * (Go's bytes.EqualFold), under which the Kelvin sign is `k` and the long s is `s`: `GAS`,
 * `ga\u017f` and `BlockStateCalls` are gas and blockStateCalls there.
 */
const folded = (key: string): string => key.toLowerCase().replaceAll('\u017f', 's');

/**
 * Whether geth would read `key` as `name` (lower case). Folding keeps a key's length wherever it
 * can give an ASCII name (only U+0130 lowers to two characters, one of them not ASCII), so a key
 * of another length is never folded.
 */
const readAs = (key: string, name: string): boolean => key.length === name.length && folded(key) === name;

/** Every value an object holds under a key geth would read as `name` (lower case). */
function valuesOf(object: unknown, name: string): unknown[] {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return [];
  const values: unknown[] = [];
  for (const key of Object.keys(object)) if (readAs(key, name)) values.push((object as Record<string, unknown>)[key]);
  return values;
}

/**
 * The most gas a call object asks for, under any spelling of the key geth reads as gas.
 * Undefined when it names none (or none that parses).
 */
export function gasOf(call: unknown): bigint | undefined {
  let most: bigint | undefined;
  for (const gas of valuesOf(call, 'gas')) {
    if (typeof gas !== 'string' || !QUANTITY.test(gas)) continue;
    const asked = BigInt(gas);
    if (most === undefined || asked > most) most = asked;
  }
  return most;
}

/**
 * Whether a call object names gas in a form other than a hex quantity (a JSON number, a decimal
 * string): geth refuses such a call, but anvil runs it at the gas it names, so the caps and
 * prices above, which read hex only, must not let it through as "no gas named".
 */
export function namesGasOtherwise(call: unknown): boolean {
  return valuesOf(call, 'gas').some((gas) => typeof gas !== 'string' || !QUANTITY.test(gas));
}

/**
 * Every call object of a request: the first param, or each call of each eth_simulateV1 block.
 * Keys are read as geth reads them; where several spellings are present, the calls under all of
 * them count (an EL matching keys exactly reads one, geth the last: either is among them).
 */
export function callsOf(method: string, params: unknown): unknown[] {
  if (!Array.isArray(params)) return [];
  if (method !== SIMULATE_METHOD) return [params[0]];
  return valuesOf(params[0], 'blockstatecalls').flatMap((blocks) =>
    Array.isArray(blocks)
      ? blocks.flatMap((block) => valuesOf(block, 'calls').flatMap((calls) => (Array.isArray(calls) ? calls : [])))
      : [],
  );
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SELECTOR = /^0x[0-9a-fA-F]{0,8}/;
/** Call object keys that name what runs exactly; any other key geth would read as one of them is refused a name. */
const NAMING_KEYS = ['to', 'data', 'input'] as const;

/**
 * What a call's EL time is learned by (src/el-turns.ts): its method, contract and selector, at
 * the head. Undefined where one name could cover calls of any cost: an eth_simulateV1, a call
 * at a block of its own (the code there may differ), with state or block overrides or an EIP-7702
 * authorization list (code of the caller's choosing), a contract creation, `to`, `data` or
 * `input` spelt other than exactly (an EL reading keys exactly would run something else), or a
 * `to` that is not an address. Every gas-heavy read asks: it allocates nothing it can avoid.
 */
export function callTarget(method: string, params: unknown): string | undefined {
  if (!Array.isArray(params) || method === SIMULATE_METHOD) return undefined;
  for (let i = 2; i < params.length; i++) if (params[i] !== null && params[i] !== undefined) return undefined;
  const block = params[1];
  if (!(block === undefined || block === null || block === 'latest' || block === 'pending')) return undefined;
  const call = params[0];
  if (call === null || typeof call !== 'object' || Array.isArray(call)) return undefined;
  for (const key of Object.keys(call)) {
    if (readAs(key, 'authorizationlist')) return undefined;
    for (const name of NAMING_KEYS) if (key !== name && readAs(key, name)) return undefined;
  }
  const { to, data, input } = call as Record<string, unknown>;
  if (typeof to !== 'string' || !ADDRESS.test(to) || (data !== undefined && input !== undefined)) return undefined;
  const calldata = data ?? input;
  if (calldata !== undefined && typeof calldata !== 'string') return undefined;
  const selector = calldata === undefined ? '' : (SELECTOR.exec(calldata)?.[0].toLowerCase() ?? undefined);
  if (selector === undefined) return undefined;
  return `${method} ${to.toLowerCase()} ${selector}`;
}

/**
 * How many times an EL runs a call of `method`: eth_estimateGas searches (~7 runs at 2,000,000
 * gas, up to ~25 at the cap), eth_createAccessList repeats until the list settles. What bounds
 * one run's time bounds the request's only times this.
 */
export function runsOf(method: string): bigint {
  return method === 'eth_estimateGas' || method === 'eth_createAccessList' || method === 'svc_estimateFrameGas' ? 16n : 1n;
}

/**
 * The gas a request's calls ask for in all. A call naming no gas is given `cap`; in an
 * eth_simulateV1 the calls naming none share one `cap` between them, as geth's simulation gives
 * each what is left of one gas pool of its cap (a wallet's preview leaves gas out of every call).
 * `gaslessShareCap` false: each at `cap`, for an EL that gives each its own gas (anvil).
 */
export function requestGas(method: string, params: unknown, cap: bigint, gaslessShareCap = true): bigint {
  let named = 0n;
  let gasless = 0;
  const searches = runsOf(method) > 1n;
  for (const call of callsOf(method, params)) {
    const gas = gasOf(call);
    // geth's estimator searches up to the block's gas limit under a named gas below a transfer's.
    if (gas === undefined || (searches && gas < TRANSFER_GAS)) gasless++;
    else named += gas;
  }
  if (gasless === 0) return named;
  return named + (method === SIMULATE_METHOD && gaslessShareCap ? cap : BigInt(gasless) * cap);
}
