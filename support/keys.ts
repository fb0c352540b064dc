/**
 * Fixed keys for tests and benchmarks: anvil's funded development keys, and keys derived from a
 * label (what a test covers must not change from run to run: a random key can land on an edge,
 * or miss one, once in a while).
 */
import { p256 } from '@noble/curves/nist.js';
import { getBytes, keccak256, toUtf8Bytes, Wallet, type Provider } from 'ethers';
import { CHAIN } from '../protocol/index.js';

export const secretFor = (label: string): string => keccak256(toUtf8Bytes(`svc-ingress test key: ${label}`));

export const walletFor = (label: string, provider?: Provider): Wallet => new Wallet(secretFor(label), provider ?? null);

/** A P256 secret key for `label`; a label whose hash is no valid scalar fails at once, every run alike. */
export function p256SecretFor(label: string): Uint8Array {
  const secret = getBytes(secretFor(label));
  if (!p256.utils.isValidSecretKey(secret)) throw new Error(`no P256 key for the label ${label}: pick another`);
  return secret;
}

/** anvil's default funded accounts 0..4 (public, well-known development keys). */
export const DEV_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
] as const;
export const DEV_KEY = DEV_KEYS[0];
export const DEV_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

/** A signed EIP-1559 transfer of 1 wei to 0x…dEaD on chain 8141, as anvil's funded keys send them. */
export function devTransfer(key: string, nonce: number): Promise<string> {
  return new Wallet(key).signTransaction({
    type: 2,
    chainId: Number(CHAIN.chainId),
    nonce,
    to: '0x000000000000000000000000000000000000dEaD',
    value: 1n,
    gasLimit: 21_000,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 0n,
  });
}
