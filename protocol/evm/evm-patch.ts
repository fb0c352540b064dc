/**
 * Whether the installed @ethereumjs/evm carries this project's patch
 * (patches/@ethereumjs+evm+10.1.3.patch, applied by patch-package when `npm ci` runs its
 * postinstall; docs/decisions/0014-patched-evm-call-frames.md). It does two things:
 * - EIP-8141's frame state-gas pools: a state-gas charge the frame's pool cannot cover halts
 *   instead of spilling into execution gas. Without it frames cannot run correctly: the frame
 *   runner refuses to start an EVM (fails closed), and the gate says so at start.
 * - speed: without it every call frame allocates 8 KB of memory up front and copies its message
 *   and result through object spreads V8 runs slowly (a 100,000-gas VERIFY prefix of calls
 *   costs ~3x the pool time).
 */
import { EVM } from '@ethereumjs/evm';

interface Patched {
  _executeCall: () => unknown;
  runInterpreter: () => unknown;
}

interface PooledEvm {
  chargeFrameStateGas: () => unknown;
}

/** Whether the frame state-gas pools of the patch are installed (checked before every EVM a frame runs in). */
export function frameStateGasPatched(): boolean {
  return (EVM.prototype as unknown as PooledEvm).chargeFrameStateGas.toString().includes('frameStateGasPools');
}

export async function evmPatchApplied(): Promise<boolean> {
  const { Memory } = (await import(new URL('./memory.js', import.meta.resolve('@ethereumjs/evm')).href)) as {
    Memory: new () => { _store: Uint8Array };
  };
  const proto = EVM.prototype as unknown as Patched;
  return (
    frameStateGasPatched() &&
    new Memory()._store.length === 0 &&
    !proto._executeCall.toString().includes('...message') &&
    !proto.runInterpreter.toString().includes('...interpreter._env')
  );
}
