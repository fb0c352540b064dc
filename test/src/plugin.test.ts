/**
 * The plugin door, checked on the source tree: a plugin reaches `src/` only through
 * src/plugin.ts, the chain's rules only through protocol/'s doors, and never reaches into
 * another plugin; the core reaches plugins only through
 * the registry, at their entry module.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as door from '../../src/plugin.js';
import { importsOf, PROTOCOL_DOORS, sourcesUnder, specifiersOf } from '../helpers/imports.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The names a source imports from the plugin door (type imports included). */
const namesFromDoor = (file: string): string[] =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'[^']*src\/plugin\.js'/g)].flatMap(
    ([, list]) =>
      list!
        .split(',')
        .map(
          (name) =>
            name
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0]!,
        )
        .filter((name) => name !== ''),
  );

const DOOR = 'src/plugin.ts';

/** `plugins/gate/head/state.ts` -> `plugins/gate/`; `plugins/auth.ts` -> `plugins/auth.ts`. */
const pluginOf = (file: string) => {
  const [, name, rest] = file.split('/');
  return rest === undefined ? `plugins/${name}` : `plugins/${name}/`;
};

describe('the plugin door', () => {
  it('finds every form of import in a source text', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "import './side-effect.js';",
      "const d = await import('./d.js');",
      "new URL('./worker.js', import.meta.url)",
      "import {\n  e,\n  type F,\n} from './e.js';",
    ].join('\n');
    expect(specifiersOf(text).sort()).to.deep.equal(['../b.js', './a.js', './c.js', './d.js', './e.js', './side-effect.js', './worker.js']);
  });

  it('plugins import from src/ only src/plugin.ts, from protocol/ only its doors, and nothing of another plugin', () => {
    const plugins = sourcesUnder('plugins');
    expect(plugins.length).to.be.greaterThan(30);
    const crossings = plugins.flatMap((file) =>
      importsOf(file)
        .filter((target) =>
          target.startsWith('src/') ? target !== DOOR : !target.startsWith(pluginOf(file)) && !PROTOCOL_DOORS.includes(target),
        )
        .map((target) => `${file} -> ${target}`),
    );
    expect(crossings).to.deep.equal([]);
  });

  it('the core reaches plugins only through the registry, at their entry modules', () => {
    const entries = new Set(sourcesUnder('plugins').filter((file) => file.split('/').length === 2 || file.endsWith('/index.ts')));
    const crossings = sourcesUnder('src').flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('plugins/') && !(file === 'src/registry.ts' && entries.has(target)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(crossings).to.deep.equal([]);
  });

  it('the door itself imports only src/', () => {
    expect(importsOf(DOOR).filter((target) => !target.startsWith('src/'))).to.deep.equal([]);
  });

  it('exports exactly these values, each imported by some plugin: a new one is a decision, made here', () => {
    const values = Object.keys(door).sort();
    expect(values).to.deep.equal([
      'CALL_GAS',
      'CLOSED',
      'DEFAULT_RPC_GAS_CAP',
      'Facts',
      'FairQueue',
      'GAS_HEAVY_METHODS',
      'INGRESS_METHODS',
      'IdleSweep',
      'LIMIT_EXCEEDED',
      'METHOD_NOT_FOUND',
      'MemoryBuckets',
      'NODE_LOCAL_METHODS',
      'OPERATOR',
      'OptionsReader',
      'PRICED_BY_SIZE',
      'PROXIED_SVC_METHODS',
      'READ_METHODS',
      'RequestTab',
      'RpcFailure',
      'SOURCE',
      'SUBMISSION_ONLY',
      'SUBSCRIBER',
      'SYNC_SUBMISSION_METHOD',
      'Upstream',
      'callsOf',
      'errors',
      'gasOf',
      'idOf',
      'namesGasOtherwise',
      'readSecret',
      'requestGas',
      'sharedFor',
      'throttledWarning',
    ]);
    const imported = new Set(sourcesUnder('plugins').flatMap(namesFromDoor));
    expect(values.filter((name) => !imported.has(name))).to.deep.equal([]);
  });
});
