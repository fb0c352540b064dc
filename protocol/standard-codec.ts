/**
 * The standard transaction types the gate accepts (legacy with EIP-155, 0x01, 0x02, 0x04),
 * decoded once from the raw bytes: only what admission needs, and the digest the
 * sender signed, re-encoded from the decoded items. ethers' `Transaction.from` plus
 * `unsignedHash` build a whole object model with checksummed addresses (~60 µs a submission,
 * a fifth of the gate's CPU under load); this does the same job in a few µs.
 */
import { toBeArray } from 'ethers';
import { CHAIN } from './chain.js';
import { refuse } from './refusal.js';
import { address, anyList, decodeCanonical, encodeRlp, fixed, integer, list, string, U256_MAX, U64_MAX, type Item } from './rlp-fields.js';
import { keccak256 } from './hex.js';
import { recoverAddress, SECP256K1_N } from './signatures.js';

export interface StandardTransaction {
  readonly type: number;
  readonly chainId: bigint;
  readonly nonce: bigint;
  /** maxFeePerGas, or gasPrice for types 0 and 1. */
  readonly maxFeePerGas: bigint;
  readonly gasLimit: bigint;
  readonly value: bigint;
  readonly yParity: 0 | 1;
  readonly r: bigint;
  readonly s: bigint;
  /** r and s as read: minimal big-endian bytes (what recovery takes, without a bigint round trip). */
  readonly rBytes: Uint8Array;
  readonly sBytes: Uint8Array;
  /** The 32-byte digest the sender signed. */
  readonly signingHash: Uint8Array;
  /** The least gas the EL will accept (intrinsic gas, or the EIP-7623 calldata floor). */
  readonly minimumGas: bigint;
  /** A contract creation's init code length (EIP-3860 caps it); undefined for a call. */
  readonly initCodeBytes: number | undefined;
  /** Type 0x04: how many EIP-7702 authorizations it carries (`authoritiesOf` recovers their signers). */
  readonly authorizationCount: number;
}

/** Intrinsic gas at Prague/Osaka (yellow paper, EIP-2028, EIP-2930, EIP-3860, EIP-7702) and the EIP-7623 floor. */
const TX_BASE = 21_000n;
const CREATE_COST = 32_000n;
const INITCODE_WORD_COST = 2n;
const STANDARD_TOKEN_COST = 4n;
const FLOOR_COST_PER_TOKEN = 10n;
const ACCESS_LIST_ADDRESS_COST = 2_400n;
const ACCESS_LIST_KEY_COST = 1_900n;
const PER_AUTHORIZATION_COST = 25_000n;

const initCodeBytes = (to: Item, data: Item) => ((to as Uint8Array).length === 0 ? (data as Uint8Array).length : undefined);

function minimumGas(to: Item, data: Item, accessList: Item, authorizations: Item | undefined): bigint {
  const bytes = data as Uint8Array;
  let nonZero = 0;
  for (const b of bytes) if (b !== 0) nonZero++;
  const tokens = BigInt(bytes.length + 3 * nonZero);
  const creation = (to as Uint8Array).length === 0;
  let intrinsic = TX_BASE + STANDARD_TOKEN_COST * tokens;
  if (creation) intrinsic += CREATE_COST + INITCODE_WORD_COST * BigInt(Math.ceil(bytes.length / 32));
  for (const entry of accessList as Item[]) {
    intrinsic += ACCESS_LIST_ADDRESS_COST + ACCESS_LIST_KEY_COST * BigInt(((entry as Item[])[1] as Item[]).length);
  }
  if (authorizations !== undefined) intrinsic += PER_AUTHORIZATION_COST * BigInt((authorizations as Item[]).length);
  const floor = TX_BASE + FLOOR_COST_PER_TOKEN * tokens;
  return intrinsic > floor ? intrinsic : floor;
}

/** Where each field sits in a typed payload; the signed fields are those before `yParity`. */
interface Layout {
  readonly arity: number;
  readonly fee: number;
  readonly gas: number;
  readonly to: number;
  readonly toRequired: boolean;
  readonly accessList: number;
  readonly authorizations?: number;
}

const TYPED: ReadonlyMap<number, Layout> = new Map([
  [0x01, { arity: 11, fee: 2, gas: 3, to: 4, toRequired: false, accessList: 7 }],
  [0x02, { arity: 12, fee: 3, gas: 4, to: 5, toRequired: false, accessList: 8 }],
  [0x04, { arity: 13, fee: 3, gas: 4, to: 5, toRequired: true, accessList: 8, authorizations: 9 }],
]);

/** Decodes `bytes` (a typed transaction's type byte included). Refuses what is malformed. */
export function decodeStandardTransaction(bytes: Uint8Array): StandardTransaction {
  const type = bytes[0]!;
  if (type >= 0xc0) return legacy(list(decodeCanonical(bytes), 9, 'legacy transaction'));
  const layout = TYPED.get(type);
  if (layout === undefined) refuse('type-unsupported', `transaction type 0x${type.toString(16).padStart(2, '0')} is not supported`);
  const p = list(decodeCanonical(bytes.subarray(1)), layout.arity, `type ${type} payload`);
  address(p[layout.to]!, 'to', !layout.toRequired);
  string(p[layout.to + 2]!, 'data');
  accessList(p[layout.accessList]!);
  const authorizationCount = layout.authorizations === undefined ? 0 : authorizations(p[layout.authorizations]!).length;
  const [yParity, r, s] = p.slice(layout.arity - 3);
  return {
    type,
    chainId: integer(p[0]!, 'chain_id', U256_MAX),
    nonce: integer(p[1]!, 'nonce', U64_MAX),
    maxFeePerGas: integer(p[layout.fee]!, 'max_fee_per_gas', U256_MAX),
    gasLimit: integer(p[layout.gas]!, 'gas_limit', U64_MAX),
    value: integer(p[layout.to + 1]!, 'value', U256_MAX),
    ...signature(integer(yParity!, 'y_parity', 1n), r!, s!),
    signingHash: digest(new Uint8Array([type]), p.slice(0, layout.arity - 3)),
    minimumGas: minimumGas(
      p[layout.to]!,
      p[layout.to + 2]!,
      p[layout.accessList]!,
      layout.authorizations === undefined ? undefined : p[layout.authorizations],
    ),
    initCodeBytes: initCodeBytes(p[layout.to]!, p[layout.to + 2]!),
    authorizationCount,
  };
}

/** EIP-7702: the prefix of an authorization's signed message, keccak(MAGIC || rlp([chain_id, address, nonce])). */
const AUTHORIZATION_MAGIC = 0x05;

/**
 * The authorities of a type 0x04 transaction (decoded and checked by `decodeStandardTransaction`):
 * the signers of its authorizations that can take effect on chain `chainId`, in order, each once.
 * An authorization for another chain, or with a y parity above 1 or a high s, is skipped as
 * EIP-7702 skips it; its nonce is not checked (it needs state): a stale one is still counted, the
 * cautious side for a pool. One recovery per authorization (~70 µs native, ~1.7 ms portable).
 */
export function authoritiesOf(bytes: Uint8Array, chainId: bigint): string[] {
  const layout = TYPED.get(bytes[0]!);
  if (layout?.authorizations === undefined) return [];
  const p = list(decodeCanonical(bytes.subarray(1)), layout.arity, `type ${bytes[0]} payload`);
  const found = new Set<string>();
  for (const [i, tuple] of authorizations(p[layout.authorizations]!).entries()) {
    const [chain, who, nonce, yParity, r, s] = tuple as Item[];
    const on = integer(chain!, `authorization_list[${i}].chain_id`, U256_MAX);
    const parity = integer(yParity!, `authorization_list[${i}].y_parity`, 255n);
    const rValue = integer(r!, `authorization_list[${i}].r`, U256_MAX);
    const sValue = integer(s!, `authorization_list[${i}].s`, U256_MAX);
    if (
      (on !== 0n && on !== chainId) ||
      parity > 1n ||
      rValue === 0n ||
      rValue >= SECP256K1_N ||
      sValue === 0n ||
      sValue > SECP256K1_N >> 1n
    ) {
      continue;
    }
    const signed = encodeRlp([chain!, who!, nonce!]);
    const message = new Uint8Array(1 + signed.length);
    message[0] = AUTHORIZATION_MAGIC;
    message.set(signed, 1);
    const authority = recoverAddress(keccak256(message), r as Uint8Array, s as Uint8Array, Number(parity));
    if (authority !== undefined) found.add(authority);
  }
  return [...found];
}

/** EIP-155 only: v = chainId × 2 + 35 + yParity; the digest signs chainId, 0, 0 in place of v, r, s. */
function legacy(p: readonly Item[]): StandardTransaction {
  address(p[3]!, 'to', true);
  string(p[5]!, 'data');
  const v = integer(p[6]!, 'v', U256_MAX);
  if (v === 27n || v === 28n) {
    refuse('legacy-not-eip155', `legacy transactions must be EIP-155 (replay-protected) signed for chain ${CHAIN.chainId}`);
  }
  if (v < 35n) refuse('sig-invalid', `legacy v ${v} is neither 27, 28 nor EIP-155`);
  const chainId = (v - 35n) / 2n;
  return {
    type: 0,
    chainId,
    nonce: integer(p[0]!, 'nonce', U64_MAX),
    maxFeePerGas: integer(p[1]!, 'gas_price', U256_MAX),
    gasLimit: integer(p[2]!, 'gas_limit', U64_MAX),
    value: integer(p[4]!, 'value', U256_MAX),
    ...signature((v - 35n) % 2n, p[7]!, p[8]!),
    signingHash: digest(new Uint8Array(0), [...p.slice(0, 6), toBeArray(chainId), new Uint8Array(0), new Uint8Array(0)]),
    minimumGas: minimumGas(p[3]!, p[5]!, [], undefined),
    initCodeBytes: initCodeBytes(p[3]!, p[5]!),
    authorizationCount: 0,
  };
}

function signature(yParity: bigint, r: Item, s: Item): Pick<StandardTransaction, 'yParity' | 'r' | 's' | 'rBytes' | 'sBytes'> {
  // integer() has checked both are canonical byte strings.
  return {
    yParity: yParity === 1n ? 1 : 0,
    r: integer(r, 'r', U256_MAX),
    s: integer(s, 's', U256_MAX),
    rBytes: r as Uint8Array,
    sBytes: s as Uint8Array,
  };
}

function accessList(item: Item): void {
  anyList(item, 'access_list').forEach((entry, i) => {
    const [who, keys] = list(entry, 2, `access_list[${i}]`);
    address(who!, `access_list[${i}].address`, false);
    for (const [k, key] of anyList(keys!, `access_list[${i}].storage_keys`).entries())
      fixed(key, 32, `access_list[${i}].storage_keys[${k}]`);
  });
}

/** EIP-7702 tuples [chain_id, address, nonce, y_parity, r, s], checked; an empty list is invalid. */
function authorizations(item: Item): readonly Item[] {
  const tuples = anyList(item, 'authorization_list');
  if (tuples.length === 0) refuse('rlp-invalid', 'authorization_list must not be empty');
  tuples.forEach((tuple, i) => {
    const [chainId, who, nonce, yParity, r, s] = list(tuple, 6, `authorization_list[${i}]`);
    integer(chainId!, `authorization_list[${i}].chain_id`, U256_MAX);
    address(who!, `authorization_list[${i}].address`, false);
    integer(nonce!, `authorization_list[${i}].nonce`, U64_MAX);
    integer(yParity!, `authorization_list[${i}].y_parity`, 255n);
    integer(r!, `authorization_list[${i}].r`, U256_MAX);
    integer(s!, `authorization_list[${i}].s`, U256_MAX);
  });
  return tuples;
}

function digest(prefix: Uint8Array, signed: Item[]): Uint8Array {
  const body = encodeRlp(signed);
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix);
  message.set(body, prefix.length);
  return keccak256(message);
}
