/** A valid frame transfer and the frames the frame-rule tests vary it with. */
import type { FrameFields, FrameTxFields } from '../../support/frames.js';

export const LIMITS = { chainId: 8141n, prefixGasBudget: 100_000n, prefixStateGasBudget: 500_000n };
export const SENDER = '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf';
export const OTHER = '0x0000000000000000000000000000000000001234';
export const SPONSOR = '0x000000000000000000000000000000000000beef';
export const EXPIRY = '0x0000000000000000000000000000000000008141';
export const SIG65 = `0x00${'11'.repeat(64)}`;
export const CAP = 16_777_216n;

export const transfer = (): FrameTxFields => ({
  sender: SENDER,
  frames: [
    { mode: 1, flags: 3, executionGas: 50_000n },
    { mode: 2, flags: 0, target: OTHER, executionGas: 50_000n, value: 1n },
  ],
  signatures: [{ scheme: 1, signature: SIG65 }],
  fees: [1_000_000_000n, 2_000_000_000n, 0n],
});

export const send = (flags: number, extra: Partial<FrameFields> = {}): FrameFields => ({
  mode: 2,
  flags,
  target: OTHER,
  executionGas: 10_000n,
  ...extra,
});
export const expiry = (extra: Partial<FrameFields> = {}): FrameFields => ({
  mode: 1,
  flags: 0,
  target: EXPIRY,
  executionGas: 5_000n,
  data: '0x00000000ffffffff',
  ...extra,
});
