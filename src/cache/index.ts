/**
 * The read cache (issue 40): answers that cannot change (rules.ts), kept by bytes (answer-cache.ts)
 * while the EL's finalized head is followed (finality.ts). In the read path behind the plugin
 * chain (server/read-path.ts): every request is allowed and priced as before, and only then answered from
 * here or from the EL. One per process, handed on across reloads that keep its settings.
 */
import type { RpcId, RpcRequest } from '../jsonrpc.js';
import type { Upstream } from '../upstream.js';
import { createHash } from 'node:crypto';
import { AnswerCache, type CacheCounts, withId } from './answer-cache.js';
import { Finality } from './finality.js';
import { cacheRule, type CacheRule } from './rules.js';

export { ENTRY_MAX_BYTES } from './answer-cache.js';
export type { CacheRule } from './rules.js';

export interface CacheOptions {
  readonly maxBytes: number;
  readonly followMs: number;
  /** Final answers also kept in, and asked of, the fleet's Redis. */
  readonly shared: boolean;
}

/** What the cache needs of the fleet's Redis (ioredis). */
export interface SharedAnswers {
  getBuffer(key: string): Promise<Buffer | null>;
  set(key: string, value: Buffer, mode: 'EX', seconds: number): Promise<unknown>;
}

/** Final answers in Redis expire after a day: Redis's own memory policy bounds them meanwhile. */
const SHARED_TTL_S = 24 * 60 * 60;

export class ReadCache {
  private readonly answers: AnswerCache;
  private readonly finality: Finality;
  /** The EL the finalized head is asked of: the current runtime's. */
  el: () => Upstream;

  constructor(
    readonly options: CacheOptions,
    el: () => Upstream,
    /** The fleet's Redis, when `options.shared`. */
    private readonly remote?: SharedAnswers,
  ) {
    this.el = el;
    this.answers = new AnswerCache(options.maxBytes);
    this.finality = new Finality(() => this.el(), this.answers, options.followMs);
  }

  /** How `request`'s answer may be kept; undefined: never. */
  ruleFor(request: RpcRequest): CacheRule | undefined {
    return cacheRule(request);
  }

  /**
   * The kept answer for `rule`, with `id` in it, read by `source`; undefined: ask the EL. With
   * `shared`, an answer a second source reads goes to the fleet's Redis then: a source flooding
   * reads nobody else makes writes nothing there.
   */
  answer(rule: CacheRule, id: RpcId, source: () => string): Buffer | undefined {
    const kept = this.answers.answer(rule.key, id);
    if (kept !== undefined && this.remote !== undefined && this.answers.shareNow(rule.key, source())) {
      // Not written (Redis down): offered again at the next reader's.
      this.remote.set(sharedKey(rule), kept, 'EX', SHARED_TTL_S).catch(() => this.answers.unshare(rule.key));
    }
    return kept;
  }

  /** The EL's answer `bytes` for `rule`, read by `source`: kept when it is final. */
  offer(rule: CacheRule, bytes: Buffer, source: string): void {
    this.answers.offer(rule, bytes, this.finality.finalized, source);
  }

  /**
   * The answer another instance kept for `rule`, with `id` in it, kept here too (for `source`, asked
   * only then); undefined when the fleet has none, or Redis does not answer (then the EL is asked).
   */
  async sharedAnswer(rule: CacheRule, id: RpcId, source: () => string): Promise<Buffer | undefined> {
    if (this.remote === undefined) return undefined;
    const bytes = await this.remote.getBuffer(sharedKey(rule)).catch(() => null);
    if (bytes === null) return undefined;
    this.answers.keep(rule, bytes, source());
    return withId(bytes, id);
  }

  get shared(): boolean {
    return this.remote !== undefined;
  }

  get counts(): CacheCounts {
    return this.answers.counts;
  }

  close(): void {
    this.finality.close();
  }
}

/** A rule's key in Redis: hashed (params can be long), prefixed. */
function sharedKey(rule: CacheRule): string {
  return `svc:cache:${createHash('sha256').update(rule.key).digest('base64url')}`;
}
