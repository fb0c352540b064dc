/**
 * The block range of an `eth_getLogs` (or an `eth_newFilter`, whose logs `eth_getFilterLogs`
 * answers): geth and reth walk every block of it, so a filter over the whole chain is one
 * request's worth of hours of EL work. size-limit refuses a range wider than
 * `max_logs_block_range` with the text public endpoints running geth answer
 * ("exceed maximum block range: N"), which indexers and libraries that split ranges read.
 *
 * `fromBlock` and `toBlock` are read as geth reads the filter's keys (case-insensitively);
 * absent, each is "latest". A tag other than "earliest" is the head (one `eth_blockNumber`,
 * shared for `HEAD_CACHE_MS` by every request that needs it: one bound a number or "earliest",
 * the other a tag); a filter naming a `blockHash` is
 * one block. A range the EL itself would refuse (from after to, a number it cannot read) is left
 * to it.
 */
export const LOG_RANGE_METHODS: ReadonlySet<string> = new Set(['eth_getLogs', 'eth_newFilter']);

const QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;
const HEAD_TAGS = new Set(['latest', 'pending', 'safe', 'finalized']);

type Bound = bigint | 'head' | undefined;

/** A filter's `fromBlock` or `toBlock` as a number, 'head', or undefined for what the EL must judge. */
function boundOf(filter: Record<string, unknown>, name: string): Bound {
  const values = Object.entries(filter).filter(([key]) => key.toLowerCase() === name);
  if (values.length > 1) return undefined;
  const value = values[0]?.[1];
  if (value === undefined || value === null) return 'head';
  if (typeof value !== 'string') return undefined;
  if (value === 'earliest') return 0n;
  if (HEAD_TAGS.has(value)) return 'head';
  return QUANTITY.test(value) ? BigInt(value) : undefined;
}

/**
 * The number of blocks the request's filter spans, asking `head` only when a bound needs it;
 * undefined when it names one block by hash or the EL must judge it.
 */
export function blockSpanOf(params: unknown, head: () => Promise<bigint>): bigint | undefined | Promise<bigint | undefined> {
  const filter = Array.isArray(params) ? params[0] : undefined;
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return undefined;
  const record = filter as Record<string, unknown>;
  if (Object.keys(record).some((key) => key.toLowerCase() === 'blockhash')) return undefined;
  const from = boundOf(record, 'fromblock');
  const to = boundOf(record, 'toblock');
  if (from === undefined || to === undefined) return undefined;
  const span = (start: bigint, end: bigint) => (end >= start ? end - start + 1n : undefined);
  if (from !== 'head' && to !== 'head') return span(from, to);
  if (from === 'head' && to === 'head') return 1n;
  return head().then((number) => span(from === 'head' ? number : from, to === 'head' ? number : to));
}
