import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHAIN, chainConfig } from '../../protocol/chain.js';
import { sourcesUnder } from '../helpers/imports.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** A number 8141 in code (not EIP-8141, chain8141 or 0x…8141 in a comment), or the verifier's address. */
const WRITTEN = /(?<![\w.-])8141n?(?![\w-])|0x0{36}8141/;
const COMMENT = /^\s*(\*|\/\/|\/\*)/;

describe('protocol: the chain, in one place', () => {
  it('is chain 8141 with 60,000,000 gas blocks, the expiry verifier at 0x…8141, cold access at 2,600', () => {
    expect(CHAIN).to.include({
      chainId: 8141n,
      blockGasLimit: 60_000_000n,
      expiryVerifier: '0x0000000000000000000000000000000000008141',
      coldAccountAccessGas: 2_600n,
    });
    expect(CHAIN.eips).to.deep.equal([2929, 3860, 7825, 8141]);
  });

  it("names its EIPs' parameters: a chain adopting EIP-8038 lists it", () => {
    expect(chainConfig(7n, 30_000_000n, [2929, 3860, 7825, 8038, 8141])).to.include({ chainId: 7n, coldAccountAccessGas: 3_000n });
  });

  it('is the only place outside the tests that writes the chain id or the expiry verifier address', () => {
    const folders = ['src', 'plugins', 'protocol', 'devnet', 'client', 'support', 'bench', 'examples'];
    const written = folders
      .flatMap(sourcesUnder)
      .flatMap((file) =>
        readFileSync(join(ROOT, file), 'utf8')
          .split('\n')
          .map((line, i) => [`${file}:${i + 1}`, line] as const)
          .filter(([, line]) => WRITTEN.test(line) && !COMMENT.test(line)),
      )
      .map(([place]) => place);
    expect(written).to.deep.equal(['protocol/chain.ts:24', 'protocol/params.ts:32', 'protocol/params.ts:33']);
  });
});
