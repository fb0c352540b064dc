/**
 * The documentation as a reader follows it: README is a front page that names every reference
 * page under docs/, and no link of README, BENCHMARKS or docs/ leads nowhere (a file that is not
 * there, or a heading the page does not have).
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README_MOST_LINES = 400;

/** Lines outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const headings = prose(readFileSync(file, 'utf8')).flatMap((line) => /^#+ (.*)$/.exec(line)?.[1] ?? []);
  return new Set(headings.map(anchorOf));
}

/** Every link target of a markdown file that is not a URL. */
function linksOf(file: string): string[] {
  return prose(readFileSync(file, 'utf8')).flatMap((line) =>
    [...line.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/.test(target)),
  );
}

const pages = () => [
  join(ROOT, 'README.md'),
  join(ROOT, 'BENCHMARKS.md'),
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name)),
];

describe('the documentation', () => {
  it(`has a README of at most ${README_MOST_LINES} lines`, () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).to.be.at.most(README_MOST_LINES);
  });

  it('names every reference page of docs/ from the README', () => {
    const linked = new Set(linksOf(join(ROOT, 'README.md')).map((target) => target.split('#')[0]));
    const references = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
    expect(references.length).to.be.at.least(9);
    expect(references.filter((name) => !linked.has(`docs/${name}`))).to.deep.equal([]);
  });

  it('links only to files that exist and to headings their page has', () => {
    const broken: string[] = [];
    for (const page of pages()) {
      for (const target of linksOf(page)) {
        const [path, fragment] = target.split('#') as [string, string | undefined];
        const file = path === '' ? page : resolve(dirname(page), path);
        const at = `${relative(ROOT, page)}: ${target}`;
        if (!existsSync(file)) broken.push(`${at} (no such file)`);
        else if (fragment !== undefined && statSync(file).isFile() && !anchorsOf(file).has(fragment))
          broken.push(`${at} (no such heading)`);
      }
    }
    expect(pages().length).to.be.greaterThan(20);
    expect(broken).to.deep.equal([]);
  });

  it("reads headings' anchors as GitHub makes them", () => {
    expect(anchorOf('Gas for each frame: `svc_estimateFrameGas`')).to.equal('gas-for-each-frame-svc_estimateframegas');
    expect(anchorOf('Behind nginx (TLS)')).to.equal('behind-nginx-tls');
  });
});
