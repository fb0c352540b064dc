/**
 * Jump-destination analysis once per code, not once per call frame. @ethereumjs/evm's
 * interpreter analyses a frame's whole code (valid JUMPDESTs, PUSH values, the opcode of every
 * position) the first time the frame reaches a JUMP or JUMPI, in its
 * `_getValidJumpDestinations(code)`: a 24 KB contract called in a loop was analysed ~700 times
 * per 100,000-gas simulation. The package neither exports its Interpreter nor offers a cache, so
 * the method is wrapped, on the class the EVM itself runs (loaded from the package's own module
 * file), by one that delegates to it and remembers the answer:
 *
 * - keyed by the opcode table of the EVM that asked (the answer lists its opcode handlers, and
 *   custom opcodes are per simulation), then by the code bytes object (HeadState.codeEntry
 *   hands every reader of an address at a head the same object; a written code, a deploy
 *   frame's, is its own object): within a simulation, every call frame of the same code after
 *   the first reuses the first one's analysis.
 *
 * WeakMaps: the analyses live as long as the simulation's EVM (a 24 KB code's is ~250 KB), not
 * as long as the head's reads keep the code. If a new version of the package drops the method,
 * `installJumpAnalysisCache` says so (its test fails) and the interpreter analyses as before.
 */
interface Analysis {
  readonly jumps: Uint8Array;
  readonly pushes: Record<number, bigint>;
  readonly opcodesCached: unknown[];
}
interface InterpreterLike {
  _evm: { _opcodeMap: object };
  _getValidJumpDestinations(code: Uint8Array): Analysis;
}

const analyses = new WeakMap<object, WeakMap<Uint8Array, Analysis>>();

let installed: Promise<boolean> | undefined;

/** Wraps the interpreter's analysis with the cache, once per thread; false if the package changed shape. */
export function installJumpAnalysisCache(): Promise<boolean> {
  installed ??= (async () => {
    const evmEntry = import.meta.resolve('@ethereumjs/evm');
    const { Interpreter } = (await import(new URL('./interpreter.js', evmEntry).href)) as {
      Interpreter?: { prototype: InterpreterLike };
    };
    const proto = Interpreter?.prototype;
    const analyse = proto?._getValidJumpDestinations;
    if (proto === undefined || typeof analyse !== 'function') return false;
    proto._getValidJumpDestinations = function (this: InterpreterLike, code: Uint8Array): Analysis {
      const opcodeMap = this._evm._opcodeMap;
      let byCode = analyses.get(opcodeMap);
      if (byCode === undefined) {
        byCode = new WeakMap();
        analyses.set(opcodeMap, byCode);
      }
      let analysis = byCode.get(code);
      if (analysis === undefined) {
        analysis = analyse.call(this, code);
        byCode.set(code, analysis);
      }
      return analysis;
    };
    return true;
  })();
  return installed;
}
