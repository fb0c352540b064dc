/**
 * The plugin door, checked on the source tree: a plugin reaches `src/` only through
 * src/plugin.ts and never reaches into another plugin; the core reaches plugins only through
 * the registry, at their entry module.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DOOR = 'src/plugin.ts';

/** Every module a source text names: static and dynamic imports, re-exports, worker URLs. */
function specifiersOf(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;]*?\sfrom\s*'([^']+)'/g,
    /\bimport\s*'([^']+)'/g,
    /\bimport\(\s*'([^']+)'\s*\)/g,
    /new URL\(\s*'([^']+)'/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

/** The project files `file` imports (relative specifiers only; packages are not the door's business). */
function importsOf(file: string): string[] {
  return specifiersOf(readFileSync(join(ROOT, file), 'utf8'))
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      relative(ROOT, resolve(ROOT, dirname(file), specifier))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts'),
    );
}

/** `plugins/gate/state.ts` -> `plugins/gate/`; `plugins/auth.ts` -> `plugins/auth.ts`. */
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

  it('plugins import from src/ only src/plugin.ts, and nothing of another plugin', () => {
    const plugins = sourcesUnder('plugins');
    expect(plugins.length).to.be.greaterThan(30);
    const crossings = plugins.flatMap((file) =>
      importsOf(file)
        .filter((target) => (target.startsWith('src/') ? target !== DOOR : !target.startsWith(pluginOf(file))))
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
