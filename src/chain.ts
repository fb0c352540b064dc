/**
 * The ordered plugin chain: creates plugins in list order, walks them per request, closes them.
 * The walk has one exit: the first `Answer` ends it; `undefined` from every plugin means
 * "stream to the EL", decided by the server, not here.
 */
import type { Answer } from './jsonrpc.js';
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
  /** The plugin behind each handler, for counting the errors it answers with. */
  private readonly owners: readonly string[];
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly plugins: readonly Plugin[],
    private readonly log: Logger,
    private readonly metrics: Metrics | undefined,
  ) {
    const active = plugins.filter((p) => p.handle !== undefined);
    this.handlers = active.map((p) => p.handle!.bind(p));
    this.owners = active.map((p) => p.name);
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
      if (verdict instanceof Promise) return verdict.then((v) => (v === undefined ? this.run(ctx, i + 1) : this.counted(i, v)));
      if (verdict !== undefined) return this.counted(i, verdict);
    }
    return undefined;
  }

  /** Errors are counted by the plugin that answered and their code. */
  private counted(i: number, verdict: Answer): Answer {
    if ('error' in verdict) this.metrics?.refused(this.owners[i]!, verdict.error.code);
    return verdict;
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
