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
