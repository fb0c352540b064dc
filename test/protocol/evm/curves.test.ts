import { readFileSync } from 'node:fs';
import { createEVM, EVM, EVMMockBlockchain } from '@ethereumjs/evm';
import { SimpleStateManager } from '@ethereumjs/statemanager';
import { createAddressFromString } from '@ethereumjs/util';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { bn254 as noble } from '@noble/curves/bn254.js';
import { expect } from 'chai';
import { curveBackends } from '../../../protocol/evm/curves.js';
import { COMMON } from '../../../protocol/evm/fork.js';

interface Vector {
  readonly Name: string;
  readonly Input: string;
  readonly Expected?: string;
  readonly ExpectedError?: string;
}

const vectors = (file: string): Vector[] => JSON.parse(readFileSync(`test/fixtures/eip-2537/${file}.json`, 'utf8')) as Vector[];
const address = (precompile: number) => createAddressFromString(`0x${precompile.toString(16).padStart(40, '0')}`);

/** What a call to `precompile` with `input` returns: its output as hex, or "fails". */
async function call(evm: EVM, precompile: number, input: string): Promise<string> {
  const { execResult } = await evm.runCall({ to: address(precompile), data: Buffer.from(input, 'hex'), gasLimit: 10_000_000n });
  return execResult.exceptionError === undefined ? Buffer.from(execResult.returnValue).toString('hex') : 'fails';
}

const word = (value: bigint) => value.toString(16).padStart(64, '0');
const g1 = (point: typeof noble.G1.Point.BASE) => {
  const { x, y } = point.toAffine();
  return `${word(x)}${word(y)}`;
};
const g2 = (point: typeof noble.G2.Point.BASE) => {
  const { x, y } = point.toAffine();
  return `${word(x.c1)}${word(x.c0)}${word(y.c1)}${word(y.c0)}`;
};

describe('gate: the pairing-curve precompiles of the simulation EVM (WASM backends)', () => {
  let evm: EVM;
  let reference: EVM;
  before(async () => {
    const { bls, bn254 } = await curveBackends();
    evm = new EVM({ common: COMMON, blockchain: new EVMMockBlockchain(), stateManager: new SimpleStateManager(), bls, bn254 });
    reference = await createEVM({ common: COMMON });
  });

  describe('BLS12-381 (EIP-2537), every test vector of the EIP', () => {
    const suites: [string, number][] = [
      ['add_G1_bls', 0x0b],
      ['mul_G1_bls', 0x0c],
      ['add_G2_bls', 0x0d],
      ['mul_G2_bls', 0x0e],
      ['pairing_check_bls', 0x0f],
      ['map_fp_to_G1_bls', 0x10],
      ['map_fp2_to_G2_bls', 0x11],
    ];
    for (const [file, precompile] of suites) {
      for (const vector of vectors(file)) {
        it(`${vector.Name}: the expected output`, async () => {
          expect(await call(evm, precompile, vector.Input)).to.equal(vector.Expected);
        });
      }
      for (const vector of vectors(`fail-${file.replace('mul_', 'msm_')}`)) {
        it(`${vector.Name} (${vector.ExpectedError}): fails`, async () => {
          expect(await call(evm, precompile, vector.Input)).to.equal('fails');
        });
      }
    }
    for (const [file, precompile] of [
      ['fail-mul_G1_bls', 0x0c],
      ['fail-mul_G2_bls', 0x0e],
    ] as const) {
      for (const vector of vectors(file)) {
        it(`${vector.Name} as one MSM pair (${vector.ExpectedError}): fails`, async () => {
          expect(await call(evm, precompile, vector.Input)).to.equal('fails');
        });
      }
    }

    it('G1ADD of a point outside the subgroup is a sum, not a failure (no subgroup check for additions)', async () => {
      const { Fp } = bls12_381.fields;
      let outside = '';
      for (let x = 1n; outside === ''; x++) {
        try {
          const point = bls12_381.G1.Point.fromAffine({ x, y: Fp.sqrt(Fp.add(Fp.mul(Fp.sqr(x), x), 4n)) });
          if (!point.isTorsionFree()) outside = `${x.toString(16).padStart(128, '0')}${point.y.toString(16).padStart(128, '0')}`;
        } catch {
          // x³ + 4 is not a square: the next x
        }
      }
      expect(await call(evm, 0x0b, `${outside}${'00'.repeat(128)}`)).to.equal(outside);
    });
  });

  describe('BN254 (EIP-196, EIP-197): as the package’s default backend answers', () => {
    const P = noble.G1.Point.BASE;
    const Q = noble.G2.Point.BASE;
    const order = noble.fields.Fr.ORDER;
    const fieldP = noble.fields.Fp.ORDER;
    const cases: [string, number, string][] = [
      ['ADD G + 2G', 0x06, `${g1(P)}${g1(P.double())}`],
      ['ADD G + (-G)', 0x06, `${g1(P)}${g1(P.negate())}`],
      ['ADD of infinity', 0x06, '00'.repeat(128)],
      ['ADD, a point off the curve', 0x06, `${word(1n)}${word(3n)}${g1(P)}`],
      ['ADD, a coordinate past the field', 0x06, `${word(fieldP)}${word(2n)}${g1(P)}`],
      ['ADD, short input (zero-padded)', 0x06, g1(P)],
      ['MUL by 0', 0x07, `${g1(P)}${word(0n)}`],
      ['MUL by 2', 0x07, `${g1(P)}${word(2n)}`],
      ['MUL by the group order - 1', 0x07, `${g1(P)}${word(order - 1n)}`],
      ['MUL by 2^256 - 1', 0x07, `${g1(P)}${'ff'.repeat(32)}`],
      ['MUL, a point off the curve', 0x07, `${word(1n)}${word(3n)}${word(5n)}`],
      ['MUL, short input (zero-padded)', 0x07, `${g1(P)}05`],
      ['MUL, long input (cut)', 0x07, `${g1(P)}${word(7n)}${'ab'.repeat(40)}`],
      ['PAIRING e(P, Q) e(-P, Q) = 1', 0x08, `${g1(P)}${g2(Q)}${g1(P.negate())}${g2(Q)}`],
      ['PAIRING e(P, Q) alone', 0x08, `${g1(P)}${g2(Q)}`],
      ['PAIRING of nothing', 0x08, ''],
      ['PAIRING, a length not a multiple of 192', 0x08, `${g1(P)}${g2(Q)}00`],
      ['PAIRING, G2 off the curve', 0x08, `${g1(P)}${word(1n)}${word(2n)}${word(3n)}${word(4n)}`],
    ];
    for (const [name, precompile, input] of cases) {
      it(name, async () => {
        const answer = await call(evm, precompile, input);
        expect(answer).to.equal(await call(reference, precompile, input));
      });
    }

    it('the answers are not all failures (the comparison has something to compare)', async () => {
      expect(await call(evm, 0x07, `${g1(P)}${word(2n)}`)).to.equal(g1(P.double()));
      expect(await call(evm, 0x08, `${g1(P)}${g2(Q)}${g1(P.negate())}${g2(Q)}`)).to.equal(word(1n));
    });
  });
});
