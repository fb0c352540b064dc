/**
 * A `logs` subscription's criteria, read and matched as geth reads and matches them
 * (eth/filters: FilterCriteria's JSON, SubscribeLogs, filterLogs): `address` one or a list (any
 * of them), `topics` by position (null or [] any; a string that one; a list any of them; a log
 * with fewer topics than positions never matches), `fromBlock`/`toBlock` "latest" or numbers.
 * Keys are matched case-insensitively, as Go's encoding/json does.
 */

const MAX_TOPICS = 4;
const MAX_ADDRESSES = 1000;
const TAGS = new Set(['earliest', 'latest', 'pending', 'finalized', 'safe']);

export interface LogFilter {
  /** Lower-case addresses; undefined: any. */
  readonly addresses: ReadonlySet<string> | undefined;
  /** Per position, the lower-case topics accepted; undefined: any. */
  readonly topics: ReadonlyArray<ReadonlySet<string> | undefined>;
  readonly from: bigint | undefined;
  readonly to: bigint | undefined;
}

/** What a log is matched on, as the EL's eth_getLogs writes it. */
export interface LogFields {
  readonly address: string;
  readonly topics: readonly string[];
  readonly blockNumber: bigint;
}

/** Why criteria are refused: `argument` (they do not parse: -32602) or `criteria` (geth's SubscribeLogs refusals). */
export type LogFilterError = { readonly kind: 'argument' | 'criteria'; readonly message: string };

export function readLogFilter(raw: unknown): LogFilter | LogFilterError {
  if (raw === undefined || raw === null) return { addresses: undefined, topics: [], from: undefined, to: undefined };
  if (typeof raw !== 'object' || Array.isArray(raw)) return argument('cannot unmarshal into a filter object');
  const field = (name: string): unknown => {
    const record = raw as Record<string, unknown>;
    if (name in record) return record[name];
    const key = Object.keys(record).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? undefined : record[key];
  };
  const blockHash = field('blockHash');
  const fromRaw = field('fromBlock');
  const toRaw = field('toBlock');
  if (blockHash != null && (fromRaw != null || toRaw != null)) {
    return argument("can't specify fromBlock/toBlock with blockHash");
  }
  const from = blockNumber(fromRaw);
  if (typeof from === 'object') return from;
  const to = blockNumber(toRaw);
  if (typeof to === 'object') return to;
  const addresses = readAddresses(field('address'));
  if (!(addresses instanceof Set) && addresses !== undefined) return addresses;
  const topics = readTopics(field('topics'));
  if (!Array.isArray(topics)) return topics as LogFilterError;
  if (topics.length > MAX_TOPICS) return criteria('exceed max topics');
  if (addresses !== undefined && addresses.size > MAX_ADDRESSES) return criteria('exceed max addresses');
  // SubscribeLogs: from/to "latest" (the default), numbers in order, or a number then "latest".
  if (from === 'pending' || to === 'pending') return criteria('pending logs are not supported');
  const fromNumber = typeof from === 'bigint' ? from : undefined;
  const toNumber = typeof to === 'bigint' ? to : undefined;
  const valid =
    (from === 'latest' && to === 'latest') ||
    (fromNumber !== undefined && toNumber !== undefined && toNumber >= fromNumber) ||
    (fromNumber !== undefined && to === 'latest');
  if (!valid) return criteria('invalid block range params');
  return { addresses, topics, from: fromNumber, to: toNumber };
}

export function isLogFilterError(value: LogFilter | LogFilterError): value is LogFilterError {
  return 'kind' in value;
}

export function matchesLog(filter: LogFilter, log: LogFields): boolean {
  if (filter.from !== undefined && log.blockNumber < filter.from) return false;
  if (filter.to !== undefined && log.blockNumber > filter.to) return false;
  if (filter.addresses !== undefined && !filter.addresses.has(log.address.toLowerCase())) return false;
  if (filter.topics.length > log.topics.length) return false;
  for (let i = 0; i < filter.topics.length; i++) {
    const accepted = filter.topics[i];
    if (accepted !== undefined && !accepted.has(log.topics[i]!.toLowerCase())) return false;
  }
  return true;
}

function readAddresses(raw: unknown): Set<string> | LogFilterError | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') {
    const why = hexError(raw, 20, 'address');
    return why === undefined ? new Set([raw.toLowerCase()]) : argument(`invalid address: ${why}`);
  }
  if (!Array.isArray(raw)) return argument('invalid addresses in query');
  const addresses = new Set<string>();
  for (const [i, address] of raw.entries()) {
    if (typeof address !== 'string') return argument(`non-string address at index ${i}`);
    const why = hexError(address, 20, 'address');
    if (why !== undefined) return argument(`invalid address at index ${i}: ${why}`);
    addresses.add(address.toLowerCase());
  }
  // geth: an empty list is no restriction.
  return addresses.size === 0 ? undefined : addresses;
}

function readTopics(raw: unknown): Array<Set<string> | undefined> | LogFilterError {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return argument('cannot unmarshal topics: not an array');
  const topics: Array<Set<string> | undefined> = [];
  for (const position of raw) {
    if (position === null) {
      topics.push(undefined);
    } else if (typeof position === 'string') {
      const why = hexError(position, 32, 'topic');
      if (why !== undefined) return argument(why);
      topics.push(new Set([position.toLowerCase()]));
    } else if (Array.isArray(position)) {
      let accepted: Set<string> | undefined = new Set();
      for (const topic of position) {
        // A null among alternatives accepts anything (geth stops reading the list there).
        if (topic === null) {
          accepted = undefined;
          break;
        }
        if (typeof topic !== 'string') return argument('invalid topic(s)');
        const why = hexError(topic, 32, 'topic');
        if (why !== undefined) return argument(why);
        accepted.add(topic.toLowerCase());
      }
      topics.push(accepted === undefined || accepted.size === 0 ? undefined : accepted);
    } else {
      return argument('invalid topic(s)');
    }
  }
  return topics;
}

/** A block tag or number as geth's rpc.BlockNumber reads it; undefined is "latest". */
function blockNumber(raw: unknown): bigint | string | LogFilterError {
  if (raw === undefined || raw === null) return 'latest';
  if (typeof raw !== 'string') return argument('block number is not a string');
  if (TAGS.has(raw)) return raw;
  if (!/^0[xX]/.test(raw)) return argument('hex string without 0x prefix');
  if (!/^0[xX](0|[1-9a-fA-F][0-9a-fA-F]*)$/.test(raw)) {
    return argument(raw.length === 2 ? 'hex string "0x"' : 'invalid hex string');
  }
  const value = BigInt(raw);
  return value > 0x7fffffffffffffffn ? argument('block number larger than int64') : value;
}

/** hexutil.Decode's refusals, then the length a `what` must have. */
function hexError(text: string, bytes: number, what: string): string | undefined {
  if (text.length === 0) return 'empty hex string';
  if (!/^0[xX]/.test(text)) return 'hex string without 0x prefix';
  if (text.length % 2 !== 0) return 'hex string of odd length';
  if (!/^0[xX][0-9a-fA-F]*$/.test(text)) return 'invalid hex string';
  const length = (text.length - 2) / 2;
  return length === bytes ? undefined : `hex has invalid length ${length} after decoding; expected ${bytes} for ${what}`;
}

function argument(message: string): LogFilterError {
  return { kind: 'argument', message };
}

function criteria(message: string): LogFilterError {
  return { kind: 'criteria', message };
}
