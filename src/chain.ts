/**
 * The ordered plugin chain: creates plugins in list order, walks them per request, closes them.
 * The walk has one exit: the first `Answer` ends it; `undefined` from every plugin means
 * "stream to the EL", decided by the server, not here.
 */
import type { BatchAnswer, Plugin, PluginEnv, PluginModule, RequestContext, Verdict } from './plugin.js';
import { describeError, type Logger } from './log.js';
import type { Metrics } from './metrics.js';

/** An enabled YAML entry with its options already read. */
export interface ChainEntry {
  readonly module: PluginModule<any>;
  readonly options: unknown;
}

type Handler = (ctx: RequestContext) => Verdict | Promise<Verdict>;

export class Chain {
  private readonly handlers: readonly Handler[];
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly plugins: readonly Plugin[],
    private readonly log: Logger,
    metrics: Metrics | undefined,
  ) {
    // Each handler counts the errors its plugin answers with, by plugin and code.
    this.handlers = plugins.flatMap((p) => {
      if (!p.handle) return [];
      const handle = p.handle.bind(p);
      if (metrics === undefined) return [handle];
      const count = (verdict: Verdict) => {
        if (verdict !== undefined && 'error' in verdict) metrics.refused(p.name, verdict.error.code);
        return verdict;
      };
      return [
        (ctx: RequestContext) => {
          const verdict = handle(ctx);
          return verdict instanceof Promise ? verdict.then(count) : count(verdict);
        },
      ];
    });
  }

  /** Creates every plugin in order; if one fails, those already created are closed. */
  static async create(entries: readonly ChainEntry[], env: PluginEnv): Promise<Chain> {
    const created: Plugin[] = [];
    try {
      for (const entry of entries) created.push(await entry.module.create(entry.options, env));
    } catch (err) {
      await new Chain(created, env.log, undefined).close();
      throw err;
    }
    return new Chain(created, env.log, env.metrics);
  }

  get names(): readonly string[] {
    return this.plugins.map((p) => p.name);
  }

  /** The smallest body cap any plugin asked for, or `fallback`. */
  maxBodyBytes(fallback: number): number {
    return Math.min(fallback, ...this.plugins.map((p) => p.maxBodyBytes ?? Infinity));
  }

  handleBatch(elements: readonly unknown[]): readonly BatchAnswer[] | undefined {
    for (const plugin of this.plugins) {
      const answers = plugin.handleBatch?.(elements);
      if (answers !== undefined) return answers;
    }
    return undefined;
  }

  /** Walks the chain; stays synchronous until a plugin returns a promise. */
  run(ctx: RequestContext, from = 0): Verdict | Promise<Verdict> {
    for (let i = from; i < this.handlers.length; i++) {
      const verdict = this.handlers[i]!(ctx);
      if (verdict instanceof Promise) {
        return verdict.then((v) => (v !== undefined ? v : this.run(ctx, i + 1)));
      }
      if (verdict !== undefined) return verdict;
    }
    return undefined;
  }

  /** Closes every plugin, last first; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const plugin of [...this.plugins].reverse()) {
        try {
          await plugin.close?.();
        } catch (err) {
          this.log.error('plugin close failed', { plugin: plugin.name, ...describeError(err) });
        }
      }
    })();
    return this.closing;
  }
}
