/**
 * Answers the chain already gave (issue 40): the EL's answer text to a read whose answer cannot
 * change (rules.ts), kept by its key and given again to anyone asking the same, with their own
 * `id` spliced into the EL's bytes: byte for byte what the EL would have answered.
 *
 * Bounded by bytes (the answers and their keys), least recently used first out. What is
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
}

export interface CacheCounts {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly bytes: number;
  readonly entries: number;
}

export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
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
    // Most recently used last: the Map's order is the eviction order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return Buffer.concat([entry.before, Buffer.from(JSON.stringify(id)), entry.after]);
  }

  /** Keeps the EL's answer `bytes` for `rule` when it is final with the head finalized at `finalized`. */
  offer(rule: CacheRule, bytes: Buffer, finalized: bigint | undefined): void {
    if (bytes.length > ENTRY_MAX_BYTES || this.entries.has(rule.key)) return;
    // One character per byte: offsets in the text are offsets in the bytes (JSON's structure is ASCII).
    const text = bytes.toString('latin1');
    const result = resultStart(text);
    // Errors (no result) and null results are never final: the thing may yet come to exist.
    if (result === undefined || text.startsWith('null', result)) return;
    if (!isFinal(rule, bytes, finalized)) return;
    const id = scalarMember(text, 'id');
    if (id === undefined) return;
    // Copies: slices would keep the pooled buffer they came from.
    const entry = {
      before: Buffer.from(bytes.subarray(0, id.start)),
      after: Buffer.from(bytes.subarray(id.end)),
      bytes: bytes.length + 2 * rule.key.length,
    };
    if (entry.bytes > this.maxBytes) return;
    this.entries.set(rule.key, entry);
    this.bytes += entry.bytes;
    for (const [key, oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(key);
      this.bytes -= oldest.bytes;
      this.evictions++;
    }
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  get counts(): CacheCounts {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, bytes: this.bytes, entries: this.entries.size };
  }
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
