/**
 * BLS12-381 point addition (precompiles 0x0b G1ADD and 0x0d G2ADD, EIP-2537) without the
 * subgroup check the EIP does not ask for. @ethereumjs/evm's default `NobleBLS` decodes each
 * input point with @noble/curves' `assertValidity()`, which also proves subgroup membership (a
 * scalar multiplication by the group order), then ignores that result for additions: a G2ADD
 * cost ~240 P256 verifications' worth per 100,000 gas (BENCHMARKS.md "Simulation cost").
 *
 * This subclass, given to the EVM as its `bls` (the package's documented way to swap the
 * implementation), checks what EIP-2537 asks of an addition's inputs (each coordinate a field
 * element, the point on the curve or the all-zero point at infinity) with the library's own
 * field arithmetic, adds with the library, and encodes as the package does. Every other
 * operation is NobleBLS's.
 */
import { EVMError, NobleBLS } from '@ethereumjs/evm';
import { bls12_381 } from '@noble/curves/bls12-381.js';

type G1Point = typeof bls12_381.G1.Point.BASE;
type G2Point = typeof bls12_381.G2.Point.BASE;

const G1_BYTES = 128;
const G2_BYTES = 256;
/** Each coordinate is 64 bytes: 16 zero bytes (checked by the precompile), then 48. */
const FP_BYTES = 64;

const notOnCurve = (): never => {
  throw new EVMError(EVMError.errorMessages.BLS_12_381_POINT_NOT_ON_CURVE);
};
const fp = (input: Uint8Array, at: number) => BigInt(`0x${Buffer.from(input.subarray(at + 16, at + FP_BYTES)).toString('hex')}`);
const isZero = (input: Uint8Array) => input.every((byte) => byte === 0);
const encode = (values: readonly bigint[]) =>
  new Uint8Array(Buffer.from(values.map((value) => value.toString(16).padStart(FP_BYTES * 2, '0')).join(''), 'hex'));

function g1(input: Uint8Array): G1Point {
  const { Point } = bls12_381.G1;
  if (isZero(input)) return Point.ZERO;
  const { Fp } = bls12_381.fields;
  const [x, y] = [fp(input, 0), fp(input, FP_BYTES)];
  if (!Fp.isValid(x) || !Fp.isValid(y)) notOnCurve();
  if (!Fp.eql(Fp.sqr(y), Fp.add(Fp.mul(Fp.sqr(x), x), Point.CURVE().b))) notOnCurve();
  return Point.fromAffine({ x, y });
}

function g2(input: Uint8Array): G2Point {
  const { Point } = bls12_381.G2;
  if (isZero(input)) return Point.ZERO;
  const { Fp, Fp2 } = bls12_381.fields;
  const parts = [0, 1, 2, 3].map((i) => fp(input, i * FP_BYTES));
  if (!parts.every((part) => Fp.isValid(part))) notOnCurve();
  const x = Fp2.create({ c0: parts[0]!, c1: parts[1]! });
  const y = Fp2.create({ c0: parts[2]!, c1: parts[3]! });
  if (!Fp2.eql(Fp2.sqr(y), Fp2.add(Fp2.mul(Fp2.sqr(x), x), Point.CURVE().b))) notOnCurve();
  return Point.fromAffine({ x, y });
}

export class AdditionWithoutSubgroupCheck extends NobleBLS {
  override addG1(input: Uint8Array): Uint8Array {
    const sum = g1(input.subarray(0, G1_BYTES))
      .add(g1(input.subarray(G1_BYTES, 2 * G1_BYTES)))
      .toAffine();
    return encode([sum.x, sum.y]);
  }

  override addG2(input: Uint8Array): Uint8Array {
    const sum = g2(input.subarray(0, G2_BYTES))
      .add(g2(input.subarray(G2_BYTES, 2 * G2_BYTES)))
      .toAffine();
    return encode([sum.x.c0, sum.x.c1, sum.y.c0, sum.y.c1]);
  }
}
