/**
 * The validation-prefix trace rules (frame-transactions.md section 8; EIP-8141 "Validation Trace
 * Rules", ERC-7562 in spirit), enforced by wrapping the fork's own opcodes: the wrapper checks
 * the rule, then runs the original logic with its original gas. Wrapping a dozen opcodes costs
 * nothing measurable; a `step` listener on every instruction doubled a simulation's time.
 *
 * A violation is recorded (the first one is the refusal's cause) and halts the call frame it
 * happens in, so an endless loop or a banned read never gets further.
 */
import { FORK_OPCODES, halt, isPrecompile, wrapOpcode, type AddOpcode, type RunState } from '../evm/index.js';

export interface RuleContext {
  readonly sender: string;
  /** Whether the sender has code at head (a code-less sender may be called: its default code). */
  senderHasCode: boolean;
  /** The frame running now is the first deploy frame: SSTORE and CREATE* at the sender are allowed. */
  inDeployFrame: boolean;
  /** The first rule broken, if any. */
  violation: string | undefined;
  codeAt(address: string): Promise<Uint8Array>;
  /** Called at every CALL* and EXTCODE*: throws once the simulation is over its compute budget (budget.ts). */
  checkBudget(): void;
}

const BANNED = new Map<number, string>([
  [0x31, 'BALANCE'],
  [0x3a, 'GASPRICE'],
  [0x40, 'BLOCKHASH'],
  [0x41, 'COINBASE'],
  [0x42, 'TIMESTAMP'],
  [0x43, 'NUMBER'],
  [0x44, 'PREVRANDAO'],
  [0x45, 'GASLIMIT'],
  [0x47, 'SELFBALANCE'],
  [0x48, 'BASEFEE'],
  [0x4a, 'BLOBBASEFEE'],
  [0x4b, 'SLOTNUM'],
  [0xf6, 'SETDELEGATE'],
  [0xfe, 'INVALID'],
  [0xff, 'SELFDESTRUCT'],
]);
/** The bytes the EIP-8141 instructions take (frame-opcodes.ts), not "undefined" here. */
const FRAME_OPCODES = new Set([0xaa, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5]);
const CALLS = new Map<number, string>([
  [0xf1, 'CALL'],
  [0xf2, 'CALLCODE'],
  [0xf4, 'DELEGATECALL'],
  [0xfa, 'STATICCALL'],
]);
const EXTCODE = new Map<number, string>([
  [0x3b, 'EXTCODESIZE'],
  [0x3c, 'EXTCODECOPY'],
  [0x3f, 'EXTCODEHASH'],
]);
const DELEGATION_PREFIX = [0xef, 0x01, 0x00];

export function validationRules(ctx: RuleContext): AddOpcode[] {
  const violate: (cause: string) => never = (cause) => {
    ctx.violation ??= cause;
    halt(cause);
  };
  const wrap = wrapOpcode;
  const banned = (opcode: number, name: string): AddOpcode => ({
    opcode,
    opcodeName: name,
    baseFee: 0,
    logicFunction: () => violate(`banned opcode ${name}`),
  });
  /** CALL* and EXTCODE* may reach a precompile or an account with real code (not a 7702 delegation). */
  const reachable = async (name: string, target: bigint) => {
    const address = `0x${target.toString(16).padStart(40, '0').slice(-40)}`;
    if (isPrecompile(address)) return;
    if (address === ctx.sender && !ctx.senderHasCode) return;
    const code = await ctx.codeAt(address);
    if (code.length === 0) violate(`${name} to an account without code`);
    if (code.length === 23 && DELEGATION_PREFIX.every((b, i) => code[i] === b)) violate(`${name} to an EIP-7702 delegation`);
  };
  const owner = (runState: RunState) => runState.interpreter.getAddress().toString();

  const rules: AddOpcode[] = [];
  for (const [opcode, name] of BANNED) rules.push(banned(opcode, name));
  // Any byte the fork leaves undefined would run as INVALID: name it instead.
  for (let opcode = 0; opcode < 256; opcode++) {
    if (!FORK_OPCODES.opcodes.has(opcode) && !BANNED.has(opcode) && !FRAME_OPCODES.has(opcode)) {
      rules.push(banned(opcode, `0x${opcode.toString(16).padStart(2, '0')} (undefined at the fork)`));
    }
  }
  rules.push(
    wrap(0x54, (runState) => {
      if (owner(runState) !== ctx.sender) violate('storage read outside the sender');
    }),
    wrap(0x55, (runState) => {
      if (!ctx.inDeployFrame) violate('banned opcode SSTORE');
      if (owner(runState) !== ctx.sender) violate('state change outside the sender');
    }),
    wrap(0x5a, (runState) => {
      // The program counter already points past GAS.
      if (!CALLS.has(runState.code[runState.programCounter] ?? 0)) violate('GAS not followed by a call');
    }),
    // Every loop runs through a JUMP or JUMPI: the budget bounds pure-compute loops there.
    wrap(0x56, ctx.checkBudget),
    wrap(0x57, ctx.checkBudget),
    wrap(0xf0, () => {
      if (!ctx.inDeployFrame) violate('banned opcode CREATE');
    }),
    wrap(0xf5, () => {
      if (!ctx.inDeployFrame) violate('banned opcode CREATE2');
    }),
  );
  for (const [opcode, name] of CALLS) {
    rules.push(
      wrap(opcode, async (runState) => {
        ctx.checkBudget();
        const [, target, value] = runState.stack.peek(3) as [bigint, bigint, bigint];
        const carriesValue = (opcode === 0xf1 || opcode === 0xf2) && value !== 0n;
        if (carriesValue && ctx.inDeployFrame) violate('value transfer in the validation prefix');
        await reachable(name, target);
      }),
    );
  }
  for (const [opcode, name] of EXTCODE) {
    rules.push(
      wrap(opcode, (runState) => {
        ctx.checkBudget();
        return reachable(name, runState.stack.peek(1)[0]!);
      }),
    );
  }
  return rules;
}
