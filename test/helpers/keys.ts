/**
 * Fixed keys for tests, derived from a label: what a test covers must not change from run to
 * run (a random key can land on an edge, or miss one, once in a while).
 */
import { p256 } from '@noble/curves/nist.js';
import { getBytes, keccak256, toUtf8Bytes, Wallet, type Provider } from 'ethers';

export const secretFor = (label: string): string => keccak256(toUtf8Bytes(`svc-ingress test key: ${label}`));

export const walletFor = (label: string, provider?: Provider): Wallet => new Wallet(secretFor(label), provider ?? null);

/** A P256 secret key for `label`; a label whose hash is no valid scalar fails at once, every run alike. */
export function p256SecretFor(label: string): Uint8Array {
  const secret = getBytes(secretFor(label));
  if (!p256.utils.isValidSecretKey(secret)) throw new Error(`no P256 key for the label ${label}: pick another`);
  return secret;
}
