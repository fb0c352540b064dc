/**
 * Answers the chain already gave (issue 40): the EL's answer text to a read whose answer cannot
 * change (rules.ts), kept by its key and given again to anyone asking the same, with their own
 * `id` spliced into the EL's bytes: byte for byte what the EL would have answered.
 *
 * Bounded by bytes (the answers and their keys), shared by source (see `offer`). What is
 * kept must be final when it is offered: the finalized head (finality.ts) is read then; a head
 * that goes back empties the cache (`clear`), so nothing kept can outlive a change.
 */
import type { RpcId } from '../jsonrpc.js';
import { resultStart, scalarMember } from '../result-elements.js';
import type { CacheRule } from './rules.js';

/** The largest answer kept: larger ones are streamed every time (and would crowd out the rest). */
export const ENTRY_MAX_BYTES = 1024 * 1024;

interface Entry {
  /** The EL's answer before and after its `id`, as it sent them. */
  readonly before: Buffer;
  readonly after: Buffer;
  readonly bytes: number;
  /** Whose read put it here: the space is charged to them. */
  readonly holder: Holder;
  /** In the fleet's Redis already (published, or read from there). */
  shared: boolean;
  /** Its holder's `moves` when it last went to the end of the holder's order. */
  moved: number;
}

/** What one source's reads put in the cache, least recently used first (see `answer`). */
interface Holder {
  readonly source: string;
  readonly entries: Map<string, Entry>;
  bytes: number;
  /** Entries put at the end of `entries`, counted. */
  moves: number;
}

export interface CacheCounts {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly bytes: number;
  readonly entries: number;
}

/** How many evictions the largest holder is taken as such before the holders are measured again. */
const RESCAN_EVERY = 256;

export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly holders = new Map<string, Holder>();
  /** The holder evicted from, measured every RESCAN_EVERY evictions. */
  private largest: Holder | undefined;
  private sinceScan = 0;
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(readonly maxBytes: number) {}

  /** The answer kept for `key`, with `id` in it; undefined (a miss) when none is. */
  answer(key: string, id: RpcId): Buffer | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last (the holder's Map order is its eviction order), to within half the
    // holder's entries: one in the newer half stays. Moving an entry at each hit costs V8 a new
    // table every few hits once the Map is old (~0.7 µs a hit).
    const { holder } = entry;
    if (holder.moves - entry.moved > holder.entries.size / 2) {
      holder.entries.delete(key);
      holder.entries.set(key, entry);
      entry.moved = ++holder.moves;
    }
    return Buffer.concat([entry.before, Buffer.from(JSON.stringify(id)), entry.after]);
  }

  /**
   * Keeps the EL's answer `bytes` for `rule`, read by `source`, when it is final with the head
   * finalized at `finalized`. Past `maxBytes`, the space is taken back from whoever holds the
   * most, their least recently used first: a source filling the cache with reads nobody repeats
   * evicts its own answers, not everyone's.
   */
  offer(rule: CacheRule, bytes: Buffer, finalized: bigint | undefined, source: string): boolean {
    if (bytes.length > ENTRY_MAX_BYTES || this.entries.has(rule.key)) return false;
    // One character per byte: offsets in the text are offsets in the bytes (JSON's structure is ASCII).
    const text = bytes.toString('latin1');
    const result = resultStart(text);
    // Errors (no result) and null results are never final: the thing may yet come to exist.
    if (result === undefined || text.startsWith('null', result)) return false;
    if (!isFinal(rule, bytes, finalized)) return false;
    return this.keep(rule, bytes, source, false, text);
  }

  /** Keeps `bytes` for `rule`, known final (`shared`: another instance kept it); whether it was kept. */
  keep(rule: CacheRule, bytes: Buffer, source: string, shared = true, text = bytes.toString('latin1')): boolean {
    if (bytes.length > ENTRY_MAX_BYTES || this.entries.has(rule.key)) return false;
    const parts = splitAtId(bytes, text);
    if (parts === undefined) return false;
    const size = bytes.length + 2 * rule.key.length;
    if (size > this.maxBytes) return false;
    const holder = this.holders.get(source) ?? { source, entries: new Map<string, Entry>(), bytes: 0, moves: 0 };
    this.holders.set(source, holder);
    // Copies: slices would keep the pooled buffer they came from.
    const entry = {
      before: Buffer.from(parts.before),
      after: Buffer.from(parts.after),
      bytes: size,
      holder,
      shared,
      moved: ++holder.moves,
    };
    this.entries.set(rule.key, entry);
    holder.entries.set(rule.key, entry);
    holder.bytes += size;
    this.bytes += size;
    while (this.bytes > this.maxBytes) this.evictFrom(this.largestHolder());
    return true;
  }

  /**
   * Whether the answer kept for `key`, now read by `source`, should go to the fleet: once, when a
   * source other than the one whose read kept it asks for it. A source reading what nobody else
   * reads never reaches the fleet's Redis.
   */
  shareNow(key: string, source: string): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.shared || entry.holder.source === source) return false;
    entry.shared = true;
    return true;
  }

  /** The answer kept for `key` did not reach the fleet after all: a later reader offers it again. */
  unshare(key: string): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) entry.shared = false;
  }

  clear(): void {
    this.entries.clear();
    this.holders.clear();
    this.largest = undefined;
    this.bytes = 0;
  }

  get counts(): CacheCounts {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, bytes: this.bytes, entries: this.entries.size };
  }

  private largestHolder(): Holder {
    if (this.largest === undefined || this.largest.entries.size === 0 || ++this.sinceScan >= RESCAN_EVERY) {
      this.sinceScan = 0;
      this.largest = undefined;
      for (const holder of this.holders.values()) if (holder.bytes > (this.largest?.bytes ?? 0)) this.largest = holder;
    }
    return this.largest!;
  }

  private evictFrom(holder: Holder): void {
    const [key, entry] = holder.entries.entries().next().value as [string, Entry];
    holder.entries.delete(key);
    this.entries.delete(key);
    holder.bytes -= entry.bytes;
    this.bytes -= entry.bytes;
    this.evictions++;
    if (holder.entries.size === 0) this.holders.delete(holder.source);
  }
}

/**
 * An EL answer around its `id` (views of `bytes`); `text` is `bytes` read one character per byte
 * when the caller has it already. Undefined when the answer has no scalar top-level `id`.
 */
export function splitAtId(bytes: Buffer, text = bytes.toString('latin1')): { readonly before: Buffer; readonly after: Buffer } | undefined {
  const id = scalarMember(text, 'id');
  return id === undefined ? undefined : { before: bytes.subarray(0, id.start), after: bytes.subarray(id.end) };
}

/** The EL's `answer` with `id` in place of its own; undefined when it has none to replace. */
export function withId(answer: Buffer, id: RpcId): Buffer | undefined {
  const parts = splitAtId(answer);
  return parts === undefined ? undefined : Buffer.concat([parts.before, Buffer.from(JSON.stringify(id)), parts.after]);
}

function isFinal(rule: CacheRule, bytes: Buffer, finalized: bigint | undefined): boolean {
  if (rule.final === 'always') return true;
  if (finalized === undefined) return false;
  if (rule.final === 'at') return rule.number <= finalized;
  // The answer names its block: a transaction or receipt (its blockNumber, null while pending) or logs.
  const { result } = JSON.parse(bytes.toString()) as { result: unknown };
  const blocks = (Array.isArray(result) ? result : [result]).map((item) => (item as { blockNumber?: unknown } | null)?.blockNumber);
  return (
    blocks.length > 0 && blocks.every((block) => typeof block === 'string' && /^0x[0-9a-f]+$/i.test(block) && BigInt(block) <= finalized)
  );
}
