/**
 * One follower of the EL's logs per process, for every `logs` subscriber (issue 38): at each new
 * head (head-feed.ts) it asks the EL once for the block's logs, by the block's hash so that the
 * logs are that block's whatever has happened since, and hands each log, serialised once, to
 * every subscription whose filter it matches. The EL sees one `eth_getLogs` per block whether one
 * client subscribes or a thousand, and none while nobody does.
 *
 * Reorgs as geth announces them: the feed keeps the last `KEEP` blocks it announced; a head whose
 * parent is not the last of them is walked back by parent hash to one that is, the blocks after
 * it announced again with `removed: true` (oldest first), then the new branch's logs.
 */
import { TimeSlices } from './time-slices.js';
import type { HeadBlock, HeadFeed } from './head-feed.js';
import { matchesLog, type LogFields, type LogFilter } from './log-filter.js';
import { resultElements } from './result-elements.js';
import type { Upstream } from './upstream.js';

const KEEP = 64;
/**
 * The logs kept to announce their removal: only those some subscriber was sent, at most this many
 * bytes (past it the oldest blocks are forgotten; a reorg that deep is not announced).
 */
const KEEP_BYTES = 32 * 1024 * 1024;
/** A block's logs may be many (a 30M-gas block of LOG0s is about 8 MB as JSON). */
const BLOCK_LOGS_MAX_BYTES = 64 * 1024 * 1024;
/** Heads waiting behind a slow EL past this are dropped: the walk back by parent fills the gap. */
const QUEUE_MAX = 8;

/** Takes the logs of one block a subscription matches, in the block's order, as the EL wrote them. */
export type LogSender = (logs: readonly string[]) => void;

interface Subscription {
  readonly filter: LogFilter;
  readonly send: LogSender;
}

interface ReadyLog {
  readonly fields: LogFields;
  readonly text: string;
}

interface Kept extends HeadBlock {
  /** The block's logs that were sent to someone. */
  readonly logs: readonly ReadyLog[];
  readonly bytes: number;
}

export class LogFeed {
  private readonly subscriptions = new Set<Subscription>();
  private stopHeads: (() => void) | undefined;
  /** The chain as announced, oldest first. */
  private kept: Kept[] = [];
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(
    private readonly heads: HeadFeed,
    /** The EL to ask, read at each block (a reload may replace it). */
    private readonly el: () => Upstream,
  ) {}

  get size(): number {
    return this.subscriptions.size;
  }

  /** Sends the logs `filter` matches from the next head on; returns what stops it. */
  subscribe(filter: LogFilter, send: LogSender): () => void {
    const subscription: Subscription = { filter, send };
    this.subscriptions.add(subscription);
    this.stopHeads ??= this.heads.subscribe((_header, block) => this.onHead(block));
    return () => {
      if (!this.subscriptions.delete(subscription) || this.subscriptions.size > 0) return;
      this.stopHeads?.();
      this.stopHeads = undefined;
      this.kept = [];
    };
  }

  private onHead(block: HeadBlock): void {
    if (this.queued >= QUEUE_MAX) return;
    this.queued++;
    this.queue = this.queue
      .then(() => this.follow(block))
      .catch(() => {
        // The EL did not answer: this head is skipped; the next one walks back over it.
      })
      .finally(() => this.queued--);
  }

  private async follow(head: HeadBlock): Promise<void> {
    if (this.subscriptions.size === 0) return;
    const known = this.kept.findIndex((kept) => kept.hash === head.hash);
    if (known >= 0) {
      // The head went back to a block already announced: what followed it is gone.
      await this.announceRemoved(this.kept.splice(known + 1));
      return;
    }
    // The first head's parent was the head when subscribers came: theirs is what follows it.
    if (this.kept.length === 0) this.kept.push({ number: head.number - 1n, hash: head.parentHash, parentHash: '', logs: [], bytes: 0 });
    const tip = this.kept.at(-1);
    // Too far ahead to walk back to (the EL was away): followed again from this head.
    if (head.number - tip!.number > BigInt(KEEP)) this.kept = [];
    const branch: HeadBlock[] = [head];
    let ancestor = -1;
    while (this.kept.length > 0) {
      ancestor = this.kept.findIndex((kept) => kept.hash === branch[0]!.parentHash);
      // Below the oldest block kept without meeting one: a reorg deeper than what is kept.
      if (ancestor >= 0 || branch[0]!.number <= this.kept[0]!.number) break;
      const parent = await this.blockByHash(branch[0]!.parentHash);
      if (parent === undefined) return;
      branch.unshift(parent);
    }
    // What the head's ancestry left out is gone whatever comes next. The branch's blocks are kept
    // as their logs are read: when the EL fails one, the next head walks back to it again.
    await this.announceRemoved(this.kept.splice(ancestor + 1));
    for (const block of branch) {
      const logs = await this.logsOf(block.hash);
      if (this.subscriptions.size === 0) return;
      const taken = await this.deliver(
        logs,
        logs.map((log) => log.text),
      );
      const sent = logs.filter((_, i) => taken[i]);
      this.kept.push({ ...block, logs: sent, bytes: sent.reduce((sum, log) => sum + log.text.length, 0) });
    }
    let bytes = this.kept.reduce((sum, block) => sum + block.bytes, 0);
    while (this.kept.length > KEEP || (bytes > KEEP_BYTES && this.kept.length > 1)) bytes -= this.kept.shift()!.bytes;
  }

  private async announceRemoved(blocks: readonly Kept[]): Promise<void> {
    for (const block of blocks) {
      const texts = block.logs.map((log) => JSON.stringify({ ...(JSON.parse(log.text) as Record<string, unknown>), removed: true }));
      await this.deliver(block.logs, texts);
    }
  }

  /**
   * Hands each subscription, as one batch, the texts of the logs its filter matches: the block's
   * logs indexed by address once, each subscription matched against its addresses' logs only.
   * Whether each log went to someone.
   */
  private async deliver(logs: readonly ReadyLog[], texts: readonly string[]): Promise<boolean[]> {
    const taken = logs.map(() => false);
    const byAddress = new Map<string, number[]>();
    for (const [i, log] of logs.entries()) {
      const address = log.fields.address.toLowerCase();
      const indexes = byAddress.get(address);
      if (indexes === undefined) byAddress.set(address, [i]);
      else indexes.push(i);
    }
    const every = logs.map((_, i) => i);
    const slices = new TimeSlices();
    for (const subscription of [...this.subscriptions]) {
      const { addresses } = subscription.filter;
      const candidates =
        addresses === undefined
          ? every
          : addresses.size === 1
            ? (byAddress.get([...addresses][0]!) ?? [])
            : [...addresses].flatMap((address) => byAddress.get(address) ?? []).sort((a, b) => a - b);
      const matched: string[] = [];
      for (const i of candidates) {
        if (matchesLog(subscription.filter, logs[i]!.fields)) {
          matched.push(texts[i]!);
          taken[i] = true;
        }
        const pause = slices.step();
        if (pause !== undefined) await pause;
      }
      // One unsubscribed while an earlier slice went out hears nothing more.
      if (matched.length > 0 && this.subscriptions.has(subscription)) subscription.send(matched);
    }
    return taken;
  }

  private async blockByHash(hash: string): Promise<HeadBlock | undefined> {
    const answer = await this.el().call('eth_getBlockByHash', [hash, false]);
    if ('error' in answer) throw new Error(answer.error.message);
    const block = answer.result as Record<string, string> | null;
    if (block === null) return undefined;
    return { number: BigInt(block.number!), hash: block.hash!, parentHash: block.parentHash! };
  }

  private async logsOf(blockHash: string): Promise<ReadyLog[]> {
    const el = this.el();
    const text = await el.callText('eth_getLogs', [{ blockHash }], BLOCK_LOGS_MAX_BYTES);
    const elements = await resultElements(text);
    if (elements === undefined) {
      const answer = el.parsed(text);
      throw new Error('error' in answer ? answer.error.message : 'eth_getLogs answered no list');
    }
    const logs: ReadyLog[] = [];
    const slices = new TimeSlices();
    for (const element of elements) {
      // Each log parsed alone, in slices of event-loop time.
      const pause = slices.step();
      if (pause !== undefined) await pause;
      const log = JSON.parse(element) as Record<string, unknown>;
      logs.push({
        text: element,
        fields: { address: log.address as string, topics: log.topics as string[], blockNumber: BigInt(log.blockNumber as string) },
      });
    }
    return logs;
  }
}
