/**
 * What the project's source files import, read from their text: for the tests that hold the
 * module boundaries (test/src/plugin.test.ts, test/protocol/boundary.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every module a source text names: static and dynamic imports, re-exports, worker URLs. */
export function specifiersOf(text: string): string[] {
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

export function sourcesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

/** The project files `file` imports (relative specifiers only; packages are not the door's business). */
export function importsOf(file: string): string[] {
  return specifiersOf(readFileSync(join(ROOT, file), 'utf8'))
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      relative(ROOT, resolve(ROOT, dirname(file), specifier))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts'),
    );
}

/** The doors through which the rest of the project reaches protocol/ (test/protocol/boundary.test.ts). */
export const PROTOCOL_DOORS: readonly string[] = ['protocol/index.ts', 'protocol/evm/index.ts', 'protocol/mempool/index.ts'];
