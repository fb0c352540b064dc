/**
 * The house's shape, held as the next maintainer reads it: the import graph has no circle (type
 * imports included: they tie a module to another's reading as firmly), and no function of src/,
 * plugins/ or protocol/ runs past a few screens.
 */
import { parse } from '@babel/parser';
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importsOf, sourcesUnder } from './helpers/imports.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = ['src', 'plugins', 'protocol', 'client', 'devnet', 'support', 'bench', 'examples'];
/** Lines a function may take, its signature and closing brace included. */
const MOST_LINES = 120;
/** A circle of the graph from `start`, as the files in order, or undefined. */
function circleFrom(start: string, graph: Map<string, string[]>, done: Set<string>): string[] | undefined {
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (file: string): string[] | undefined => {
    if (onPath.has(file)) return [...path.slice(path.indexOf(file)), file];
    if (done.has(file)) return undefined;
    path.push(file);
    onPath.add(file);
    for (const target of graph.get(file) ?? []) {
      const circle = visit(target);
      if (circle !== undefined) return circle;
    }
    path.pop();
    onPath.delete(file);
    done.add(file);
    return undefined;
  };
  return visit(start);
}

interface Node {
  readonly type?: string;
  readonly loc?: { start: { line: number }; end: { line: number } };
  readonly id?: { name?: string } | null;
  readonly key?: { name?: string };
  readonly body?: unknown;
  readonly [key: string]: unknown;
}

/** Every function of a TypeScript source, as "file name" and its length in lines. */
function functionsOf(file: string): Array<[string, number]> {
  const program = parse(readFileSync(join(ROOT, file), 'utf8'), { sourceType: 'module', plugins: ['typescript'] }).program;
  const found: Array<[string, number]> = [];
  const visit = (node: Node) => {
    if (/Function|Method/.test(node.type ?? '') && node.body !== undefined && node.loc !== undefined) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      found.push([`${file} ${node.id?.name ?? node.key?.name ?? `(line ${node.loc.start.line})`}`, lines]);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc') continue;
      for (const child of Array.isArray(value) ? value : [value])
        if (child !== null && typeof child === 'object' && typeof (child as Node).type === 'string') visit(child as Node);
    }
  };
  visit(program as unknown as Node);
  return found;
}

/** A circle written from its least file, so that each is named once, whichever of its files found it. */
function nameOf(circle: readonly string[]): string {
  const ring = circle.slice(0, -1);
  const from = ring.indexOf([...ring].sort()[0]!);
  const turned = [...ring.slice(from), ...ring.slice(0, from)];
  return [...turned, turned[0]].join(' -> ');
}

describe('the house', () => {
  it('has no circle in its import graph, type imports included', () => {
    const files = FOLDERS.flatMap(sourcesUnder);
    expect(files.length).to.be.greaterThan(150);
    const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => existsSync(join(ROOT, target)))]));
    const done = new Set<string>();
    const circles = files.map((file) => circleFrom(file, graph, done)).filter((circle) => circle !== undefined);
    expect([...new Set(circles.map(nameOf))]).to.deep.equal([]);
  });

  it('finds a circle where there is one (the check itself)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(circleFrom('a.ts', graph, new Set())).to.deep.equal(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
    // Found from another of its files, it is named the same.
    expect(nameOf(circleFrom('b.ts', graph, new Set())!)).to.equal('a.ts -> b.ts -> c.ts -> a.ts');
  });

  it('exempts from type checks, in the mutation run, every folder the build compiles (else no instrumented file compiles)', () => {
    const { include } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
    const pattern = /disableTypeChecks: '\{([^}]*)\}\/\*\*\/\*\.ts'/.exec(readFileSync(join(ROOT, 'test/mutation/run.ts'), 'utf8'));
    expect(pattern?.[1]?.split(',').sort()).to.deep.equal([...include].sort());
  });

  it(`keeps every function of src/, plugins/ and protocol/ within ${MOST_LINES} lines`, () => {
    const functions = ['src', 'plugins', 'protocol'].flatMap(sourcesUnder).flatMap(functionsOf);
    expect(functions.length).to.be.greaterThan(1_000);
    const beyond = functions.filter(([name, lines]) => lines > MOST_LINES);
    expect(beyond.map(([name, lines]) => `${name}: ${lines} lines`)).to.deep.equal([]);
  });
});
