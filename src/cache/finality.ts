/**
 * The EL's finalized head, followed for the answer cache (issue 40): asked every `followMs`
 * (`eth_getBlockByNumber("finalized")`), so a newly finalized block's answers are kept within one
 * interval of the EL finalizing it. A finalized head that goes back (an EL reset, a devnet's
 * revert) empties the cache: nothing kept may outlive what made it final. An EL that does not
 * know the tag leaves it undefined: then only answers final by hash are kept.
 */
import type { Upstream } from '../upstream.js';
import type { AnswerCache } from './answer-cache.js';

export class Finality {
  private number: bigint | undefined;
  private readonly timer: NodeJS.Timeout;
  private asking = false;

  constructor(
    private readonly el: () => Upstream,
    private readonly cache: AnswerCache,
    followMs: number,
  ) {
    this.timer = setInterval(() => void this.follow(), followMs).unref();
    void this.follow();
  }

  /** The finalized head's number as last seen; undefined before the first answer or without one. */
  get finalized(): bigint | undefined {
    return this.number;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async follow(): Promise<void> {
    if (this.asking) return;
    this.asking = true;
    try {
      const answer = await this.el().call('eth_getBlockByNumber', ['finalized', false]);
      const block = 'result' in answer ? (answer.result as { number?: unknown } | null) : null;
      const number = typeof block?.number === 'string' ? BigInt(block.number) : undefined;
      if (number !== undefined && this.number !== undefined && number < this.number) this.cache.clear();
      this.number = number;
    } catch {
      // The EL did not answer: what was final stays final; the next interval asks again.
    } finally {
      this.asking = false;
    }
  }
}
