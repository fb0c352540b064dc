import { EVMError, NobleBLS } from '@ethereumjs/evm';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { expect } from 'chai';
import { AdditionWithoutSubgroupCheck } from '../../../../plugins/gate/simulation/bls.js';

const word = (value: bigint) => value.toString(16).padStart(128, '0');
const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
const hex = (data: Uint8Array) => Buffer.from(data).toString('hex');
const g1 = (point: typeof bls12_381.G1.Point.BASE) => {
  const { x, y } = point.toAffine();
  return `${word(x)}${word(y)}`;
};
const g2 = (point: typeof bls12_381.G2.Point.BASE) => {
  const { x, y } = point.toAffine();
  return `${word(x.c0)}${word(x.c1)}${word(y.c0)}${word(y.c1)}`;
};
/** A point on the G1 curve outside the prime-order subgroup: EIP-2537 adds it all the same. */
const outsideSubgroup = () => {
  const { Fp } = bls12_381.fields;
  for (let x = 1n; ; x++) {
    const rhs = Fp.add(Fp.mul(Fp.sqr(x), x), 4n);
    try {
      const y = Fp.sqrt(rhs);
      const point = bls12_381.G1.Point.fromAffine({ x, y });
      if (!point.isTorsionFree()) return `${word(x)}${word(y)}`;
    } catch {
      // not a square: next x
    }
  }
};
/** The answer, or "fails": the precompile turns whatever its implementation throws into a failed call with all its gas. */
const outcome = (add: () => Uint8Array) => {
  try {
    return hex(add());
  } catch {
    return 'fails';
  }
};

describe('gate: BLS12-381 additions (0x0b, 0x0d) without the subgroup check', () => {
  const ours = new AdditionWithoutSubgroupCheck();
  const reference = new NobleBLS();
  const { G1, G2 } = bls12_381;
  const zero1 = '00'.repeat(128);
  const zero2 = '00'.repeat(256);
  const off1 = `${word(1n)}${word(1n)}`;
  const off2 = `${word(1n)}${word(1n)}${word(1n)}${word(1n)}`;
  const tooBig = `${word(bls12_381.fields.Fp.ORDER)}${word(2n)}`;

  for (const [name, input] of [
    ['G + 2G', `${g1(G1.Point.BASE)}${g1(G1.Point.BASE.double())}`],
    ['G + (-G): infinity', `${g1(G1.Point.BASE)}${g1(G1.Point.BASE.negate())}`],
    ['infinity + G', `${zero1}${g1(G1.Point.BASE)}`],
    ['a point outside the subgroup + G', `${outsideSubgroup()}${g1(G1.Point.BASE)}`],
    ['a point off the curve', `${off1}${g1(G1.Point.BASE)}`],
    ['a coordinate past the field', `${g1(G1.Point.BASE)}${tooBig}`],
  ] as const) {
    it(`G1ADD, ${name}: as @ethereumjs/evm's NobleBLS answers`, () => {
      expect(outcome(() => ours.addG1(bytes(input)))).to.equal(outcome(() => reference.addG1(bytes(input))));
    });
  }

  for (const [name, input] of [
    ['G + 2G', `${g2(G2.Point.BASE)}${g2(G2.Point.BASE.double())}`],
    ['G + G', `${g2(G2.Point.BASE)}${g2(G2.Point.BASE)}`],
    ['infinity + infinity', `${zero2}${zero2}`],
    ['a point off the curve', `${off2}${g2(G2.Point.BASE)}`],
  ] as const) {
    it(`G2ADD, ${name}: as @ethereumjs/evm's NobleBLS answers`, () => {
      expect(outcome(() => ours.addG2(bytes(input)))).to.equal(outcome(() => reference.addG2(bytes(input))));
    });
  }

  it('G1ADD of a point outside the subgroup is an answer, not an error (EIP-2537: no subgroup check for additions)', () => {
    expect(outcome(() => ours.addG1(bytes(`${outsideSubgroup()}${zero1}`)))).to.equal(outsideSubgroup());
  });

  it('a point off the curve fails as EIP-2537 names it', () => {
    expect(() => ours.addG1(bytes(`${off1}${zero1}`)))
      .to.throw(EVMError)
      .with.property('error', 'point not on curve');
  });
});
