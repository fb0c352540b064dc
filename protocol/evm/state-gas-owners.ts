/**
 * EIP-8141's attribution of storage state gas to frames ("Gas Accounting"): an SSTORE that sets
 * a slot new this transaction is charged to the frame running it, which owns the charge; a later
 * frame clearing that slot back to zero refills the owner's receipt (`gas_used.state`), not its
 * own pool, which never holds more than its frame declared. A refill within the owning frame
 * returns to that frame's pool, as the EVM (EIP-8037) already does.
 *
 * Ownership and receipt changes are journaled with the state changes that cause them: a call
 * frame that fails, a frame that fails and an atomic batch that is unrolled undo them.
 */
import type { EVM } from '@ethereumjs/evm';
import type { FrameContext } from './frame-opcodes.js';
import { FORK_OPCODES, type AddOpcode, type GasFunction, type LogicFunction } from './evm-types.js';

export class StateGasOwners {
  /** `address:slot` → index of the frame whose SSTORE charge for it is outstanding. */
  private readonly owners = new Map<string, number>();
  private readonly undo: Array<() => void> = [];
  private readonly marks: number[] = [];

  constructor(private readonly ctx: FrameContext) {}

  checkpoint(): void {
    this.marks.push(this.undo.length);
  }

  commit(): void {
    this.marks.pop();
  }

  revert(): void {
    const to = this.marks.pop() ?? 0;
    while (this.undo.length > to) this.undo.pop()!();
  }

  /** Follows each EVM call frame: one that fails takes its ownership and receipt changes with it. */
  journalCalls(evm: EVM): void {
    evm.events.on('beforeMessage', () => this.checkpoint());
    evm.events.on('afterMessage', (result) => (result.execResult.exceptionError === undefined ? this.commit() : this.revert()));
  }

  /** SSTORE as the fork has it, its state-gas charge owned and its cross-frame refill redirected. */
  sstore(): AddOpcode {
    const original = FORK_OPCODES.opcodes.get(0x55)!;
    const logic = FORK_OPCODES.handlers.get(0x55) as LogicFunction;
    return {
      opcode: 0x55,
      opcodeName: original.name,
      baseFee: original.fee,
      gasFunction: FORK_OPCODES.dynamicGasHandlers.get(0x55) as GasFunction,
      logicFunction: async (runState, common) => {
        const key = `${runState.interpreter.getAddress().toString()}:${runState.stack.peek(1)[0]!.toString(16)}`;
        const before = this.ctx.stateGasLeft;
        await logic(runState, common);
        const after = this.ctx.stateGasLeft;
        if (after < before) this.own(key, this.ctx.frameIndex);
        else if (after > before) this.refilled(key, after - before);
      },
    };
  }

  private own(key: string, frame: number | undefined): void {
    const prior = this.owners.get(key);
    if (frame === undefined) this.owners.delete(key);
    else this.owners.set(key, frame);
    this.undo.push(() => (prior === undefined ? this.owners.delete(key) : this.owners.set(key, prior)));
  }

  private refilled(key: string, amount: bigint): void {
    const owner = this.owners.get(key);
    this.own(key, undefined);
    if (owner === undefined || owner === this.ctx.frameIndex) return;
    // Not this frame's to spend: taken back from its pool, off the owner's receipt.
    this.ctx.stateGasLeft -= amount;
    const receipts = this.ctx.completed;
    const prior = receipts[owner]!;
    receipts[owner] = { ...prior, stateGas: prior.stateGas - amount };
    this.undo.push(() => {
      receipts[owner] = prior;
    });
  }
}
