/**
 * `npm run test:mutation`: StrykerJS over the security boundary, one target file at a time, each
 * mutant tested by a fresh mocha process running that file's own tests (Stryker's command runner:
 * the mocha runner of Stryker 9 accepts mocha < 12 only, and Stryker 10 needs Node 22).
 *
 * Stryker copies the project into .stryker-tmp/, instruments the target with every mutant at once
 * (mutation switching), compiles it with tsc, and activates one mutant per run through an
 * environment variable. String-literal mutants are left out: they change message text, which the
 * score does not count. Prints `mutation score: N% (killed K of T)` per file and in total;
 * Stryker's JSON reports (every survivor with its line) go to reports/mutation/. Slow: not in CI.
 *
 * Usage: node dist/test/mutation/run.js [file …]   (default: every target below)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';

/** Each target and the test files whose mocha run judges its mutants. */
const TARGETS: Record<string, readonly string[]> = {
  'protocol/frame-checks.ts': ['test/protocol/frame-checks.test.ts'],
  'protocol/mempool/policy.ts': ['test/protocol/mempool/policy.test.ts'],
  // The protocol-defined step, alone and as direct evaluation takes it.
  'protocol/defined-frames.ts': ['test/protocol/defined-frames.test.ts', 'test/protocol/direct-evaluation.test.ts'],
  // The prefix run and its trace rules, over a world in memory (no anvil).
  'protocol/mempool/trace-rules.ts': ['test/protocol/mempool/trace-rules.test.ts', 'test/protocol/mempool/validate-prefix.test.ts'],
  'protocol/mempool/validate-prefix.ts': ['test/protocol/mempool/validate-prefix.test.ts', 'test/protocol/mempool/trace-rules.test.ts'],
  'protocol/standard-checks.ts': ['test/protocol/standard-checks.test.ts'],
  'protocol/frame-codec.ts': ['test/protocol/frame-codec.test.ts'],
  'protocol/rlp-fields.ts': ['test/protocol/frame-codec.test.ts', 'test/protocol/standard-codec.test.ts'],
  'protocol/standard-codec.ts': ['test/protocol/standard-codec.test.ts'],
  // The scheme table's lengths and gas are enforced by the static checks and the prefix budgets.
  'protocol/signatures.ts': [
    'test/protocol/signatures.test.ts',
    'test/protocol/frame-checks.test.ts',
    'test/protocol/mempool/policy.test.ts',
  ],
  'plugins/gate/head/admission.ts': ['test/plugins/gate/head/admission.test.ts'],
  // The reader's envelope rules are pinned through the server: exact answers to malformed requests.
  'src/jsonrpc.ts': ['test/src/jsonrpc.test.ts', 'test/src/server/index.test.ts', 'test/e2e/bad-inputs.test.ts'],
  // Its refusals at load are pinned by the config tests, operator calls by auth's.
  'plugins/allowlist.ts': ['test/plugins/allowlist.test.ts', 'test/src/config/load.test.ts', 'test/plugins/auth.test.ts'],
  // The plugin contract holds auth to passing what it does not guard, even when called directly.
  'plugins/auth.ts': ['test/plugins/auth.test.ts', 'test/src/config/load.test.ts', 'test/plugins/contract.test.ts'],
  // Fairness (issue 34): EL turns by measured time, the queues served by source, the body budget,
  // the per-source connection share, refusal holds, the peaks a long call is judged by, and the
  // seals of an EL that holds reads while it seals (heavy calls placed between its ticks).
  'src/el-turns.ts': ['test/src/el-turns.test.ts'],
  'src/seal-watch.ts': ['test/src/seal-watch.test.ts', 'test/src/el-turns.test.ts'],
  'src/fair-queue.ts': ['test/src/fair-queue.test.ts'],
  'src/body-budget.ts': ['test/src/body-budget.test.ts'],
  'src/peak-history.ts': ['test/src/peak-history.test.ts'],
  'src/source-connections.ts': ['test/src/source-connections.test.ts'],
  'src/refusal-hold.ts': ['test/src/refusal-hold.test.ts'],
};

const REPORTS = 'reports/mutation';
const CONFIGS = '.stryker-tmp/configs';

interface Report {
  files: Record<
    string,
    { mutants: Array<{ status: string; mutatorName: string; location: { start: { line: number } }; replacement?: string }> }
  >;
}

/** Killed (a test failed, or the mutant hung or crashed the run) of all that ran. */
function tally(report: Report): { killed: number; total: number; survivors: string[] } {
  let killed = 0;
  let total = 0;
  const survivors: string[] = [];
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const mutant of mutants) {
      if (mutant.status === 'Ignored' || mutant.status === 'CompileError') continue;
      total++;
      if (mutant.status === 'Killed' || mutant.status === 'Timeout' || mutant.status === 'RuntimeError') killed++;
      else survivors.push(`${file}:${mutant.location.start.line} ${mutant.mutatorName} → ${JSON.stringify(mutant.replacement ?? '')}`);
    }
  }
  return { killed, total, survivors };
}

const percent = (killed: number, total: number) => (total === 0 ? 100 : (100 * killed) / total).toFixed(1);

function run(target: string): { killed: number; total: number } {
  const tests = TARGETS[target];
  if (tests === undefined) throw new Error(`${target} is not a mutation target (${Object.keys(TARGETS).join(', ')})`);
  const name = basename(target, '.ts');
  const reportFile = join(REPORTS, `${name}.json`);
  const specs = tests.map((t) => join('dist', t.replace(/\.ts$/, '.js'))).join(' ');
  const config = {
    $schema: '../../node_modules/@stryker-mutator/core/schema/stryker-schema.json',
    mutate: [target],
    testRunner: 'command',
    commandRunner: { command: `node node_modules/mocha/bin/mocha.js --no-config --bail --timeout 30000 ${specs}` },
    buildCommand: `node ${join(process.cwd(), 'dist/test/mutation/build-sandbox.js')} ${process.cwd()}`,
    symlinkNodeModules: false,
    // TypeScript 7 has no JavaScript API for Stryker's tsconfig rewriting, which only project references need.
    tsconfigFile: 'no-tsconfig-rewriting.json',
    // Every folder of tsconfig.json's include: Stryker's instrumented file compiles only under `// @ts-nocheck`.
    disableTypeChecks: '{src,plugins,protocol,client,devnet,examples,support,bench,test}/**/*.ts',
    coverageAnalysis: 'off',
    mutator: { excludedMutations: ['StringLiteral'] },
    ignorePatterns: ['dist', 'reports', '.scratch'],
    reporters: ['json', 'progress'],
    jsonReporter: { fileName: reportFile },
    concurrency: Number(process.env.MUTATION_CONCURRENCY ?? availableParallelism()),
    timeoutMS: 30_000,
    tempDirName: '.stryker-tmp',
    cleanTempDir: true,
  };
  mkdirSync(CONFIGS, { recursive: true });
  const configFile = join(CONFIGS, `${name}.json`);
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const stryker = spawnSync('node', ['node_modules/@stryker-mutator/core/bin/stryker.js', 'run', configFile], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (stryker.status !== 0) throw new Error(`stryker failed on ${target} (exit ${stryker.status})`);
  const { killed, total, survivors } = tally(JSON.parse(readFileSync(reportFile, 'utf8')) as Report);
  for (const survivor of survivors) console.log(`  survived: ${survivor}`);
  console.log(`${target}: mutation score: ${percent(killed, total)}% (killed ${killed} of ${total})`);
  return { killed, total };
}

const targets = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(TARGETS);
const results = targets.map((target) => [target, run(target)] as const);
console.log('');
for (const [target, { killed, total }] of results)
  console.log(`${target}: mutation score: ${percent(killed, total)}% (killed ${killed} of ${total})`);
const killed = results.reduce((sum, [, r]) => sum + r.killed, 0);
const total = results.reduce((sum, [, r]) => sum + r.total, 0);
console.log(`total: mutation score: ${percent(killed, total)}% (killed ${killed} of ${total})`);
