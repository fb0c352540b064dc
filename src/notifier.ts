/**
 * Notifications sent fairly (issue 38): the feeds put each notification in its connection's
 * outbox, and one scheduler per process sends from the outboxes round-robin by source, `TURN` at
 * a time, letting the event loop turn after each slice of time (time-slices.ts). A source whose 64
 * subscriptions match every log of a 28,000-log block is owed 1.8 million notifications; another
 * source's next head or log waits behind one turn of each other source, never behind all of it,
 * and a request waits behind at most one slice.
 *
 * An outbox holds the texts the feeds serialised once, by reference, a block's batch at a time. A connection whose unsent
 * notifications and socket buffer together pass `capBytes` is a slow consumer: its outbox is
 * emptied and `overflow` called (the connection closes it).
 */
import { TimeSlices } from './time-slices.js';

const TURN = 16;

/** Where an outbox sends: a WebSocket connection. */
export interface NotificationTarget {
  send(text: string): void;
  /** Runs `sends` with the socket corked: a turn's notifications leave in one write. */
  corked?(sends: () => void): void;
  readonly bufferedAmount: number;
  readonly open: boolean;
}

/** Notifications owed: `prefix` + each text + `}}`, in order. */
interface Batch {
  readonly prefix: string;
  readonly texts: readonly string[];
  next: number;
}

export class Outbox {
  private pending: Batch[] = [];
  private head = 0;
  private bytes = 0;
  private closed = false;
  /** In the scheduler's ready list. */
  queued = false;

  constructor(
    private readonly notifier: Notifier,
    readonly source: string,
    private readonly target: NotificationTarget,
    private readonly capBytes: number,
    private readonly overflow: () => void,
  ) {}

  /** Owes `prefix` + text + `}}` for each of `texts` (a subscription's notifications of one block). */
  push(prefix: string, texts: readonly string[]): void {
    if (this.closed || texts.length === 0) return;
    this.pending.push({ prefix, texts, next: 0 });
    for (const text of texts) this.bytes += prefix.length + text.length + 2;
    if (this.bytes + this.target.bufferedAmount > this.capBytes) {
      this.close();
      this.overflow();
      return;
    }
    this.notifier.wake(this);
  }

  /** Sends up to `max` of what is owed; how many it sent. */
  sendSome(max: number): number {
    if (this.target.corked === undefined) return this.sendUncorked(max);
    let sent = 0;
    this.target.corked(() => (sent = this.sendUncorked(max)));
    return sent;
  }

  private sendUncorked(max: number): number {
    let sent = 0;
    while (sent < max && this.head < this.pending.length && !this.closed) {
      const batch = this.pending[this.head]!;
      const text = batch.texts[batch.next++]!;
      this.bytes -= batch.prefix.length + text.length + 2;
      if (this.target.open) this.target.send(`${batch.prefix}${text}}}`);
      sent++;
      if (batch.next === batch.texts.length) this.head++;
    }
    if (this.head === this.pending.length) {
      this.pending = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head);
      this.head = 0;
    }
    return sent;
  }

  get empty(): boolean {
    return this.closed || this.head === this.pending.length;
  }

  /** Drops what is unsent; nothing more is taken. */
  close(): void {
    this.closed = true;
    this.pending = [];
    this.head = 0;
    this.bytes = 0;
  }
}

export class Notifier {
  /** Outboxes with something to send, by source, in the order the sources became ready. */
  private readonly ready = new Map<string, Outbox[]>();
  private running = false;

  outbox(source: string, target: NotificationTarget, capBytes: number, overflow: () => void): Outbox {
    return new Outbox(this, source, target, capBytes, overflow);
  }

  wake(outbox: Outbox): void {
    if (outbox.queued) return;
    outbox.queued = true;
    const boxes = this.ready.get(outbox.source);
    if (boxes === undefined) this.ready.set(outbox.source, [outbox]);
    else boxes.push(outbox);
    if (this.running) return;
    this.running = true;
    setImmediate(() => void this.run());
  }

  private async run(): Promise<void> {
    const slices = new TimeSlices();
    while (this.ready.size > 0) {
      for (const [source, boxes] of this.ready) {
        const outbox = boxes.shift()!;
        outbox.sendSome(TURN);
        if (outbox.empty) outbox.queued = false;
        else boxes.push(outbox);
        if (boxes.length === 0) this.ready.delete(source);
        const pause = slices.step();
        if (pause !== undefined) await pause;
      }
    }
    this.running = false;
  }
}
