/**
 * protocol/ is a library of the chain's rules: it imports nothing of the project outside itself,
 * and the rest of the project reaches it only through its two doors (protocol/index.ts, and
 * protocol/evm/index.ts for the EVM). Its own unit tests (test/protocol/) may reach any module.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importsOf, sourcesUnder } from '../helpers/imports.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DOORS = ['protocol/index.ts', 'protocol/evm/index.ts'];
/** Package-relative URLs (`new URL('./memory.js', <a package's entry>)`) name no project file. */
const projectImportsOf = (file: string) => importsOf(file).filter((target) => existsSync(join(ROOT, target)));

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
        .filter((target) => target.startsWith('protocol/') && !DOORS.includes(target))
        .map((target) => `${file} -> ${target}`),
    );
    expect(crossings).to.deep.equal([]);
  });

  it('decodes a frame transaction through modules of its own only: the codec reaches no src/ module', () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const target of projectImportsOf(file)) visit(target);
    };
    visit('protocol/frame-codec.ts');
    visit('protocol/frame-checks.ts');
    expect([...seen].filter((file) => !file.startsWith('protocol/'))).to.deep.equal([]);
    expect(seen.size).to.be.greaterThan(3);
  });
});
