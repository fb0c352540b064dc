/**
 * One follower of the EL's head per process, for every `newHeads` subscriber (issue 38): it asks
 * the EL for the latest block every `pollMs` while anyone listens (never otherwise), and hands
 * each new header, serialised once, to every listener. The EL sees the same requests whether one
 * client subscribes or a thousand. Heads skipped between two polls are fetched by number, in
 * order (at most `CATCH_UP_MAX` of them: past that, only the latest), so that a subscriber sees
 * every block as geth's newHeads does; a head that goes back or changes at the same height (a
 * reorg) is announced as it is.
 */
import { TimeSlices } from './time-slices.js';
import type { Upstream } from './upstream.js';

/** Block fields that are not the header's (geth's newHeads sends the header alone). */
const NOT_HEADER = new Set(['transactions', 'uncles', 'size', 'withdrawals', 'totalDifficulty']);
const CATCH_UP_MAX = 32;

/** What a follower of blocks needs of one (log-feed.ts): its place in the chain. */
export interface HeadBlock {
  readonly number: bigint;
  readonly hash: string;
  readonly parentHash: string;
}

export type HeadListener = (header: string, block: HeadBlock) => void;

export class HeadFeed {
  private readonly listeners = new Set<HeadListener>();
  private last: bigint | undefined;
  private lastHash: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    /** The EL to ask, read at each poll (a reload may replace it). */
    private readonly el: () => Upstream,
    private readonly pollMs: number,
  ) {}

  get size(): number {
    return this.listeners.size;
  }

  /** Listens from the next head on; returns what stops listening. */
  subscribe(listener: HeadListener): () => void {
    this.listeners.add(listener);
    this.timer ??= setInterval(() => void this.poll(), this.pollMs);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      clearInterval(this.timer);
      this.timer = undefined;
      this.last = undefined;
      this.lastHash = undefined;
    };
  }

  close(): void {
    this.listeners.clear();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const latest = await this.block('latest');
      if (latest === undefined) return;
      const number = BigInt(latest.number as string);
      if (this.last === undefined) {
        // Subscribers hear of the blocks after the one current when they came.
        this.last = number;
        this.lastHash = latest.hash as string;
        return;
      }
      if (number === this.last && latest.hash === this.lastHash) return;
      if (number > this.last + 1n && number - this.last <= BigInt(CATCH_UP_MAX)) {
        for (let missed = this.last + 1n; missed < number; missed++) {
          const block = await this.block(`0x${missed.toString(16)}`);
          if (block !== undefined) await this.announce(block);
        }
      }
      this.last = number;
      this.lastHash = latest.hash as string;
      await this.announce(latest);
    } catch {
      // The EL did not answer: the next poll asks again.
    } finally {
      this.polling = false;
    }
  }

  private async block(tag: string): Promise<Record<string, unknown> | undefined> {
    const answer = await this.el().call('eth_getBlockByNumber', [tag, false]);
    return 'result' in answer && answer.result !== null && typeof answer.result === 'object'
      ? (answer.result as Record<string, unknown>)
      : undefined;
  }

  private async announce(block: Record<string, unknown>): Promise<void> {
    const header = JSON.stringify(Object.fromEntries(Object.entries(block).filter(([key]) => !NOT_HEADER.has(key))));
    const at: HeadBlock = {
      number: BigInt(block.number as string),
      hash: block.hash as string,
      parentHash: block.parentHash as string,
    };
    const slices = new TimeSlices();
    for (const listener of [...this.listeners]) {
      // One that stopped listening while an earlier slice went out hears nothing more.
      if (!this.listeners.has(listener)) continue;
      listener(header, at);
      const pause = slices.step();
      if (pause !== undefined) await pause;
    }
  }
}
