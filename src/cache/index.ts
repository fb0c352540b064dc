/**
 * The read cache (issue 40): answers that cannot change (rules.ts), kept by bytes (answer-cache.ts)
 * while the EL's finalized head is followed (finality.ts). In the read path behind the plugin
 * chain (server.ts): every request is allowed and priced as before, and only then answered from
 * here or from the EL. One per process, handed on across reloads that keep its settings.
 */
import type { RpcId, RpcRequest } from '../jsonrpc.js';
import type { Upstream } from '../upstream.js';
import { AnswerCache, type CacheCounts } from './answer-cache.js';
import { Finality } from './finality.js';
import { cacheRule, type CacheRule } from './rules.js';

export { ENTRY_MAX_BYTES } from './answer-cache.js';
export type { CacheRule } from './rules.js';

export interface CacheOptions {
  readonly maxBytes: number;
  readonly followMs: number;
}

export class ReadCache {
  private readonly answers: AnswerCache;
  private readonly finality: Finality;
  /** The EL the finalized head is asked of: the current runtime's. */
  el: () => Upstream;

  constructor(
    readonly options: CacheOptions,
    el: () => Upstream,
  ) {
    this.el = el;
    this.answers = new AnswerCache(options.maxBytes);
    this.finality = new Finality(() => this.el(), this.answers, options.followMs);
  }

  /** How `request`'s answer may be kept; undefined: never. */
  ruleFor(request: RpcRequest): CacheRule | undefined {
    return cacheRule(request);
  }

  /** The kept answer for `rule`, with `id` in it; undefined: ask the EL. */
  answer(rule: CacheRule, id: RpcId): Buffer | undefined {
    return this.answers.answer(rule.key, id);
  }

  /** The EL's answer `bytes` for `rule`, read by `source`: kept when it is final. */
  offer(rule: CacheRule, bytes: Buffer, source: string): void {
    this.answers.offer(rule, bytes, this.finality.finalized, source);
  }

  get counts(): CacheCounts {
    return this.answers.counts;
  }

  close(): void {
    this.finality.close();
  }
}
