/**
 * Whether the installed @ethereumjs/evm carries this project's patch
 * (patches/@ethereumjs+evm+10.1.3.patch, applied by patch-package when `npm ci` runs its
 * postinstall; docs/decisions/0014-patched-evm-call-frames.md). Without it every call frame
 * allocates 8 KB of memory up front and copies its message and result through object spreads
 * V8 runs slowly: a 100,000-gas VERIFY prefix of calls costs ~3x the pool time. Simulation is
 * as correct either way; the gate warns once at start when the patch is missing.
 */
import { EVM } from '@ethereumjs/evm';

interface Patched {
  _executeCall: () => unknown;
  runInterpreter: () => unknown;
}

export async function evmPatchApplied(): Promise<boolean> {
  const { Memory } = (await import(new URL('./memory.js', import.meta.resolve('@ethereumjs/evm')).href)) as {
    Memory: new () => { _store: Uint8Array };
  };
  const proto = EVM.prototype as unknown as Patched;
  return (
    new Memory()._store.length === 0 &&
    !proto._executeCall.toString().includes('...message') &&
    !proto.runInterpreter.toString().includes('...interpreter._env')
  );
}
