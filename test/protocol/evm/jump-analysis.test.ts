import { expect } from 'chai';
import { installJumpAnalysisCache } from '../../../protocol/evm/jump-analysis.js';

interface Analysis {
  readonly jumps: Uint8Array;
}
/** The interpreter class @ethereumjs/evm runs, from the package's own module file (as jump-analysis.ts loads it). */
const interpreter = async () =>
  (
    (await import(new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm')).href)) as {
      Interpreter: { prototype: { _getValidJumpDestinations(this: unknown, code: Uint8Array): Analysis } };
    }
  ).Interpreter.prototype;

describe("gate: the interpreter's jump-destination analysis, once per code and opcode table", () => {
  // PUSH1 3, JUMP, JUMPDEST, STOP, PUSH2 0x5b5b (JUMPDEST bytes inside push data are not destinations)
  const code = Uint8Array.from([0x60, 0x03, 0x56, 0x5b, 0x00, 0x61, 0x5b, 0x5b]);
  const opcodes = (map: unknown[]) => ({ _evm: { _opcodeMap: map }, lookupOpInfo: (op: number) => map[op] });
  const table = Array.from({ length: 256 }, (_, op) => ({ opcodeInfo: { code: op } }));

  it('is installed on the class the EVM runs (a new package version without the method fails here)', async () => {
    expect(await installJumpAnalysisCache()).to.equal(true);
    expect(await installJumpAnalysisCache()).to.equal(true);
  });

  it('answers the same analysis for the same code object and opcode table, and analyses anew otherwise', async () => {
    await installJumpAnalysisCache();
    const analyse = (await interpreter())._getValidJumpDestinations;
    const sameTable = opcodes(table);
    const first = analyse.call(sameTable, code);
    expect([...first.jumps]).to.deep.equal([0, 0, 0, 1, 0, 0, 0, 0]);
    expect(analyse.call(opcodes(table), code)).to.equal(first);
    // Another simulation's EVM (its own custom opcodes): its own handlers.
    expect(analyse.call(opcodes([...table]), code)).to.not.equal(first);
    // Equal bytes in another object (a deploy frame's written code): analysed on their own.
    expect(analyse.call(sameTable, code.slice())).to.not.equal(first);
  });
});
