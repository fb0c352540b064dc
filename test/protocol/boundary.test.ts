/**
 * protocol/ is a library of the chain's rules: it imports nothing of the project outside itself,
 * and the rest of the project reaches it only through its three doors (protocol/index.ts,
 * protocol/evm/index.ts for the EVM, protocol/mempool/index.ts for a prefix run in it). Its own
 * unit tests (test/protocol/) may reach any module.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importsOf, PROTOCOL_DOORS, sourcesUnder } from '../helpers/imports.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** Package-relative URLs (`new URL('./memory.js', <a package's entry>)`) name no project file. */
const projectImportsOf = (file: string) => importsOf(file).filter((target) => existsSync(join(ROOT, target)));
/** Every project module `files` reach, themselves included. */
function closureOf(...files: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const target of projectImportsOf(file)) visit(target);
  };
  for (const file of files) visit(file);
  return seen;
}

describe('protocol/: the chain rules as a library', () => {
  it('imports nothing of src/, plugins/, devnet/ or any other folder of the project', () => {
    const modules = sourcesUnder('protocol');
    expect(modules.length).to.be.greaterThan(15);
    const crossings = modules.flatMap((file) =>
      projectImportsOf(file)
        .filter((target) => !target.startsWith('protocol/'))
        .map((target) => `${file} -> ${target}`),
    );
    expect(crossings).to.deep.equal([]);
  });

  it('is reached from the rest of the project only through its doors', () => {
    const outside = ['src', 'plugins', 'client', 'devnet', 'bench', 'support', 'examples'].flatMap(sourcesUnder);
    const crossings = outside.flatMap((file) =>
      projectImportsOf(file)
        .filter((target) => target.startsWith('protocol/') && !PROTOCOL_DOORS.includes(target))
        .map((target) => `${file} -> ${target}`),
    );
    expect(crossings).to.deep.equal([]);
  });

  it('decodes a frame transaction through modules of its own only: the codec reaches no src/ module', () => {
    const seen = closureOf('protocol/frame-codec.ts', 'protocol/frame-checks.ts');
    expect([...seen].filter((file) => !file.startsWith('protocol/'))).to.deep.equal([]);
    expect(seen.size).to.be.greaterThan(3);
  });

  it('loads no EVM through its first door: the mempool policy is there, the prefix run under the trace rules is not', () => {
    const seen = closureOf('protocol/index.ts');
    expect(seen).to.include('protocol/mempool/policy.ts');
    expect([...seen].filter((file) => file.startsWith('protocol/evm/') || file === 'protocol/mempool/validate-prefix.ts')).to.deep.equal(
      [],
    );
  });
});
