/**
 * Names for @ethereumjs/evm's custom-opcode types, which the package does not export from its
 * root, and the fork's own opcode table that the custom opcodes wrap or reuse.
 */
import { EVMError, getOpcodesForHF, paramsEVM, type EVMOpts } from '@ethereumjs/evm';
import { COMMON } from './fork.js';

type CustomOpcode = NonNullable<EVMOpts['customOpcodes']>[number];
export type AddOpcode = Extract<CustomOpcode, { logicFunction: unknown }>;
export type RunState = Parameters<AddOpcode['logicFunction']>[0];
export type GasFunction = NonNullable<AddOpcode['gasFunction']>;
export type LogicFunction = AddOpcode['logicFunction'];

// The opcode table needs the EVM's parameters on the Common (the EVM constructor adds them too).
COMMON.updateParams(paramsEVM);

/** The fork's opcodes: name and base fee, logic, dynamic gas (by opcode byte). */
export const FORK_OPCODES = getOpcodesForHF(COMMON);

/** Halts the current call frame exceptionally (all its gas consumed), naming why. */
export function halt(why: string): never {
  throw new EVMError(why as ConstructorParameters<typeof EVMError>[0]);
}

export const word = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`));
export const addressWord = (address: string): bigint => BigInt(address);

/**
 * The fork's own opcode with `check` run first, then its original logic and gas. The check runs
 * before the opcode's dynamic gas, where the EVM refuses state changes in a static call: a banned
 * SSTORE is named as such, not as a "static state change".
 */
export function wrapOpcode(opcode: number, check: (runState: RunState) => void | Promise<void>): AddOpcode {
  const original = FORK_OPCODES.opcodes.get(opcode)!;
  const logic = FORK_OPCODES.handlers.get(opcode) as LogicFunction;
  const gas = FORK_OPCODES.dynamicGasHandlers.get(opcode) as GasFunction | undefined;
  if (gas !== undefined) {
    return {
      opcode,
      opcodeName: original.name,
      baseFee: original.fee,
      gasFunction: async (runState, fee, common) => {
        await check(runState);
        return gas(runState, fee, common);
      },
      logicFunction: logic,
    };
  }
  return {
    opcode,
    opcodeName: original.name,
    baseFee: original.fee,
    logicFunction: async (runState, common) => {
      await check(runState);
      return logic(runState, common);
    },
  };
}

/** JUMP, JUMPI and the calls with `check` first: every loop and every call frame meets it (a compute budget). */
export function budgetChecks(check: () => void): AddOpcode[] {
  return [0x56, 0x57, 0xf0, 0xf1, 0xf2, 0xf4, 0xf5, 0xfa].map((opcode) => wrapOpcode(opcode, check));
}
