/**
 * What the conformance suites share: EEST's frame builders re-expressed with this project's
 * encoder (`verify_frame()`, `default_frame()`, …), the sender's canonical entry and its signing,
 * and the case runner: each case's transaction goes through the running ingress to anvil, and the
 * gate's answer must be the one named (`admitted` and forwarded byte for byte, or the exact refusal).
 */
import { expect } from 'chai';
import { computeAddress } from 'ethers';
import {
  encodeFrameTx,
  frameSigHash,
  RECIPIENT,
  secp256k1Entry,
  type EntryFields,
  type FrameFields,
  type FrameTxFields,
} from '../../support/frames.js';
import { call, rpc } from '../../support/http.js';
import { secretFor } from '../../support/keys.js';
import type { useFrameIngress } from '../helpers/submit-target.js';

/** EIP-8037: a slot set from zero is 64 state bytes at 1,530 (one fresh write's state gas). */
export const FRESH = 97_920n;

export const GWEI = 1_000_000_000n;
export const U64 = 1n << 64n;
export const U256 = 1n << 256n;
/** EIP-7825. */
export const TX_GAS_CAP = 16_777_216n;
export const ONE_ETH = 10n ** 18n;
export const EXPIRY_VERIFIER = '0x0000000000000000000000000000000000008141';
export const FOREIGN_TARGET = '0x0000000000000000000000000000000000001234';

/** An account of a case: its key and address. */
export interface Account {
  readonly key: string;
  readonly address: string;
}

export type Suite = ReturnType<typeof useFrameIngress>;

/** A case: the transaction from `sender`, and what the gate answers (`admitted`, or its exact refusal). */
export interface Case {
  readonly id: string;
  readonly build: (sender: Account, suite: Suite) => FrameTxFields | Promise<FrameTxFields>;
  readonly expected: 'admitted' | { readonly reason: string; readonly message: string };
  /** Why the gate's verdict differs from EEST's, when it does. */
  readonly diverges?: string;
  /** The sender's balance before the case (1 ether unless named; 0: it does not exist). */
  readonly balance?: bigint;
}

export const refused = (reason: string, message: string) => ({ reason, message });

/** A fixed account of `label` (the same in every run). */
export function accountFor(label: string): Account {
  const key = secretFor(`conformance: ${label}`);
  return { key, address: computeAddress(key).toLowerCase() };
}

export const verify = (extra: Partial<FrameFields> = {}): FrameFields => ({ mode: 1, flags: 3, executionGas: 10_000n, ...extra });
export const deflt = (extra: Partial<FrameFields> = {}): FrameFields => ({
  mode: 0,
  flags: 0,
  target: RECIPIENT,
  executionGas: 1_000n,
  ...extra,
});
export const sender = (extra: Partial<FrameFields> = {}): FrameFields => ({ mode: 2, flags: 0, executionGas: 1_000n, ...extra });
export const expiry = (extra: Partial<FrameFields> = {}): FrameFields => ({
  mode: 1,
  flags: 0,
  target: EXPIRY_VERIFIER,
  executionGas: 3_000n,
  data: '0x00000000ffffffff',
  ...extra,
});

/** EEST's base: `[verify_frame()]` with the sender's canonical SECP256K1 entry. */
export const base = (from: Account, frames: FrameFields[] = [verify()], more: EntryFields[] = []): FrameTxFields => ({
  sender: from.address,
  frames,
  signatures: [{ scheme: 1, signer: from.address }, ...more],
  fees: [0n, 2n * GWEI, 0n],
});

/**
 * Signs the entries that carry no signature yet: each empty-msg SECP256K1 entry over the
 * signature hash, by the key of its signer (the sender's when it names none).
 */
export function sign(fields: FrameTxFields, keys: readonly Account[]): FrameTxFields {
  const digest = frameSigHash(fields);
  for (const entry of fields.signatures) {
    if (entry.signature !== undefined || entry.scheme !== 1 || entry.msg !== undefined) continue;
    const signer = entry.signer ?? fields.sender;
    const account = keys.find((key) => key.address === signer);
    if (account !== undefined) entry.signature = secp256k1Entry(account.key, digest);
  }
  return fields;
}

/** Code at a fresh address, funded with 1 ether and nonce 1 (a deployed contract). */
export async function contractAt(suite: Suite, code: string): Promise<string> {
  const address = `0x${(0xc0f0000n + BigInt(contracts++)).toString(16).padStart(40, '0')}`;
  await call(suite.anvil.url, 'anvil_setCode', [address, code]);
  await call(suite.anvil.url, 'anvil_setBalance', [address, `0x${ONE_ETH.toString(16)}`]);
  await call(suite.anvil.url, 'anvil_setNonce', [address, '0x1']);
  return address;
}
let contracts = 0;

/** One `it` per case of each table: `<table>[<id>]`. */
export function itCases(suite: Suite, tables: ReadonlyArray<readonly [string, readonly Case[]]>, keys: readonly Account[] = []): void {
  for (const [table, cases] of tables) {
    for (const c of cases) {
      it(`${table}[${c.id}]${c.diverges === undefined ? '' : ' (diverges: see the case)'}`, async () => {
        const from = accountFor(`${table} ${c.id}`);
        await call(suite.anvil.url, 'anvil_setBalance', [from.address, `0x${(c.balance ?? ONE_ETH).toString(16)}`]);
        const fields = sign(await c.build(from, suite), [from, ...keys]);
        await call(suite.anvil.url, 'evm_mine', []);
        const raw = encodeFrameTx(fields);
        const answer = JSON.parse((await rpc(suite.ingress.url, 'eth_sendRawTransaction', [raw])).text);
        const seen =
          answer.result !== undefined
            ? 'admitted'
            : { code: answer.error.code, reason: answer.error.data?.reason, message: answer.error.message };
        if (c.expected === 'admitted') {
          expect(seen).to.equal('admitted');
          expect(suite.target.received).to.deep.equal([raw]);
        } else {
          expect(seen).to.deep.equal({ code: -32000, ...c.expected });
          expect(suite.target.received).to.deep.equal([]);
        }
      });
    }
  }
}
