/**
 * One WebSocket connection's `eth_subscribe` / `eth_unsubscribe` (issue 38), answered once the
 * plugin chain has passed them (priced as any request): `newHeads` from the head feed, `logs`
 * from the log feed, both shared by every connection of the process. A connection holds at most
 * `PER_CONNECTION` subscriptions and a source at most `PER_SOURCE` across its connections: every
 * notification is a send on the event loop that nobody's tokens pay for.
 */
import { randomBytes } from 'node:crypto';
import { errors } from './errors.js';
import type { HeadFeed } from './head-feed.js';
import type { Answer, RpcRequest } from './jsonrpc.js';
import type { LogFeed } from './log-feed.js';
import { isLogFilterError, readLogFilter } from './log-filter.js';
import { Notifier, type Outbox } from './notifier.js';

const PER_CONNECTION = 16;
const PER_SOURCE = 64;

/** What every connection of a process shares. */
export class Feeds {
  /** Subscriptions open per source. */
  private readonly bySource = new Map<string, number>();
  private total = 0;

  /** Sends every connection's notifications, round-robin by source. */
  readonly notifier = new Notifier();

  constructor(
    readonly heads: HeadFeed,
    readonly logs: LogFeed,
  ) {}

  /** Subscriptions open now, every kind. */
  get size(): number {
    return this.total;
  }

  /** Takes one of `source`'s subscriptions; false when it holds all it may. */
  take(source: string): boolean {
    const held = this.bySource.get(source) ?? 0;
    if (held >= PER_SOURCE) return false;
    this.bySource.set(source, held + 1);
    this.total++;
    return true;
  }

  give(source: string): void {
    const left = (this.bySource.get(source) ?? 1) - 1;
    if (left === 0) this.bySource.delete(source);
    else this.bySource.set(source, left);
    this.total--;
  }

  close(): void {
    this.heads.close();
  }
}

export class ConnectionSubscriptions {
  private readonly open = new Map<string, () => void>();

  constructor(
    private readonly feeds: Feeds,
    /** The connection's notifications, sent in its source's turns. */
    private readonly outbox: Outbox,
    private readonly notified: (count: number) => void,
  ) {}

  /** The answer to a subscription method; undefined for any other method. */
  answer(request: RpcRequest): Answer | undefined {
    const params = Array.isArray(request.params) ? request.params : [];
    if (request.method === 'eth_unsubscribe') {
      const stop = typeof params[0] === 'string' ? this.open.get(params[0]) : undefined;
      stop?.();
      return { result: stop !== undefined && this.open.delete(params[0] as string) };
    }
    if (request.method !== 'eth_subscribe') return undefined;
    const kind = params[0];
    if (kind !== 'newHeads' && kind !== 'logs') return { error: errors.subscriptionKindUnsupported(String(kind)) };
    const filter = kind === 'logs' ? readLogFilter(params[1]) : undefined;
    if (filter !== undefined && isLogFilterError(filter)) {
      return { error: errors.logCriteriaRefused(filter.message, filter.kind === 'criteria') };
    }
    if (this.open.size >= PER_CONNECTION) return { error: errors.tooManySubscriptions(PER_CONNECTION) };
    const source = this.outbox.source;
    if (!this.feeds.take(source)) return { error: errors.tooManySubscriptions(PER_SOURCE, 'source') };
    const id = `0x${randomBytes(16).toString('hex')}`;
    const prefix = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":`;
    const notify = (results: readonly string[]) => {
      this.notified(results.length);
      this.outbox.push(prefix, results);
    };
    const stop =
      filter === undefined ? this.feeds.heads.subscribe((header) => notify([header])) : this.feeds.logs.subscribe(filter, notify);
    this.open.set(id, () => {
      stop();
      this.feeds.give(source);
    });
    return { result: id };
  }

  close(): void {
    for (const stop of this.open.values()) stop();
    this.open.clear();
  }
}
