/**
 * The ordered plugin chain: creates plugins in list order, walks them per request, closes them.
 * The walk has one exit: the first `Answer` ends it; `undefined` from every plugin means
 * "stream to the EL", decided by the server, not here.
 */
import { CLOSED } from './facts.js';
import { errors } from './errors.js';
import type { Answer } from './jsonrpc.js';
import type { BatchAnswer, Plugin, PluginEnv, PluginModule, RequestContext, Verdict } from './plugin.js';
import { describeError, type Logger } from './log.js';
import type { Metrics } from './metrics.js';

/** An enabled YAML entry with its options already read. */
export interface ChainEntry {
  // biome-ignore lint/suspicious/noExplicitAny: each entry's options are of its own module's type, read by that module.
  readonly module: PluginModule<any>;
  readonly options: unknown;
}

type Handler = (ctx: RequestContext) => Verdict | Promise<Verdict>;

/** One plugin's handler, with the plugin's name for counting the errors it answers with. */
interface Step {
  readonly handle: Handler;
  readonly owner: string;
}

export class Chain {
  /**
   * The handlers a request walks, in list order, compiled once per method that some plugin
   * names in its `methods`; every other method walks `anyMethod`, the plugins that act on all
   * methods. A read then calls two handlers instead of seven, and the table is bounded by the
   * methods the plugins name, not by what clients send.
   */
  private readonly plans: ReadonlyMap<string, readonly Step[]>;
  private readonly anyMethod: readonly Step[];
  private readonly admitters: readonly Plugin[];
  private readonly sourcer: Plugin | undefined;
  private readonly requestSourcer: Plugin | undefined;
  /** Method -> the plugin that leaves it unserved. */
  private readonly hidden: ReadonlyMap<string, string>;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly plugins: readonly Plugin[],
    private readonly log: Logger,
    private readonly metrics: Metrics | undefined,
  ) {
    const active = plugins.filter((p) => p.handle !== undefined);
    const planFor = (method: string | undefined) =>
      active
        .filter((p) => p.methods === undefined || (method !== undefined && p.methods.has(method)))
        .map((p) => ({ handle: p.handle!.bind(p), owner: p.name }));
    this.anyMethod = planFor(undefined);
    const named = new Set(active.flatMap((p) => [...(p.methods ?? [])]));
    this.plans = new Map([...named].map((method) => [method, planFor(method)]));
    this.admitters = plugins.filter((p) => p.admitBody !== undefined);
    this.sourcer = plugins.find((p) => p.connectionSource !== undefined);
    this.requestSourcer = plugins.find((p) => p.requestSource !== undefined);
    this.hidden = new Map(plugins.flatMap((p) => [...(p.hiddenMethods ?? [])].map((method) => [method, p.name] as const)));
  }

  /** Creates every plugin in order; if one fails, those already created are closed. */
  /** `metrics`: where the chain counts refusals by plugin (tests may leave it out). */
  static async create(entries: readonly ChainEntry[], env: PluginEnv, metrics?: Metrics): Promise<Chain> {
    const created: Plugin[] = [];
    try {
      for (const entry of entries) created.push(await entry.module.create(entry.options, env));
    } catch (err) {
      await new Chain(created, env.log, undefined).close();
      throw err;
    }
    return new Chain(created, env.log, metrics);
  }

  get names(): readonly string[] {
    return this.plugins.map((p) => p.name);
  }

  /** The smallest body cap any plugin asked for, or `fallback`. */
  maxBodyBytes(fallback: number): number {
    return Math.min(fallback, ...this.plugins.map((p) => p.maxBodyBytes ?? Infinity));
  }

  /** Asks every plugin with `admitBody`, in list order; the first refusal is the answer. */
  admitBody(peer: RequestContext['peer'], bytes: number): Verdict | Promise<Verdict> {
    return this.admitFrom(peer, bytes, 0);
  }

  private admitFrom(peer: RequestContext['peer'], bytes: number, from: number): Verdict | Promise<Verdict> {
    for (let i = from; i < this.admitters.length; i++) {
      const verdict = this.admitters[i]!.admitBody!(peer, bytes);
      if (verdict instanceof Promise) return verdict.then((v) => v ?? this.admitFrom(peer, bytes, i + 1));
      if (verdict !== undefined) return verdict;
    }
    return undefined;
  }

  /** The first plugin's name for a request's source (see `Plugin.requestSource`); undefined: none has one. */
  requestSource(peer: RequestContext['peer']): string | undefined {
    return this.requestSourcer?.requestSource?.(peer);
  }

  /** The first plugin's name for a connection's source (see `Plugin.connectionSource`); undefined: none has one. */
  connectionSource(address: string): string | null | undefined {
    return this.sourcer?.connectionSource?.(address);
  }

  handleBatch(elements: readonly unknown[]): readonly BatchAnswer[] | undefined {
    for (const plugin of this.plugins) {
      const answers = plugin.handleBatch?.(elements);
      if (answers !== undefined) return answers;
    }
    return undefined;
  }

  /** Walks the chain; stays synchronous until a plugin returns a promise. */
  run(ctx: RequestContext): Verdict | Promise<Verdict> {
    const hider = this.hidden.get(ctx.request.method);
    if (hider !== undefined) return this.counted({ handle: () => undefined, owner: hider }, { error: errors.methodNotFound() }, ctx);
    return this.walk(ctx, this.plans.get(ctx.request.method) ?? this.anyMethod, 0);
  }

  private walk(ctx: RequestContext, steps: readonly Step[], from: number): Verdict | Promise<Verdict> {
    for (let i = from; i < steps.length; i++) {
      const step = steps[i]!;
      const verdict = step.handle(ctx);
      if (verdict instanceof Promise)
        return verdict.then((v) => (v === undefined ? this.walk(ctx, steps, i + 1) : this.counted(step, v, ctx)));
      if (verdict !== undefined) return this.counted(step, verdict, ctx);
    }
    return undefined;
  }

  /**
   * Errors are counted by the plugin that answered and their code; not an answer to a client who
   * left meanwhile (the gate's "not forwarded" then): nobody was refused, and counted it would
   * look like the gate failing closed.
   */
  private counted(step: Step, verdict: Answer, ctx: RequestContext): Answer {
    if ('error' in verdict && ctx.facts.get(CLOSED) !== true) this.metrics?.refused(step.owner, verdict.error.code);
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
