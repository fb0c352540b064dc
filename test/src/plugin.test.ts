/**
 * The plugin door, checked on the source tree: a plugin reaches `src/` only through
 * src/plugin.ts, the chain's rules only through protocol/'s doors, and never reaches into
 * another plugin; the core reaches plugins only through
 * the registry, at their entry module.
 */
import { expect } from 'chai';
import { importsOf, PROTOCOL_DOORS, sourcesUnder, specifiersOf } from '../helpers/imports.js';

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
});
