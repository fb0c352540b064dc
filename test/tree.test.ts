/**
 * The test tree mirrors src/, plugins/ and protocol/: every module has its unit tests at
 * test/<its path>.test.ts, or is named below with the suite that holds its contract instead.
 */
import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Modules whose contract is held elsewhere, and where. */
const COVERED_ELSEWHERE: Readonly<Record<string, string>> = {
  'src/ingress.ts': 'test/src/server/index.test.ts and test/e2e/ (the listener, drain and reload: only whole processes show them)',
  'src/server/exchange.ts': 'test/src/server/index.test.ts (the answers, refusals and settling every request gets)',
  'src/server/body.ts': 'test/src/server/index.test.ts (bodies read, capped, stalled and parsed through the listener)',
  'src/server/read-path.ts':
    'test/src/server/index.test.ts, test/src/cache/ and test/e2e/el-fairness.test.ts (kept, shared and streamed reads; EL turns)',
  'src/registry.ts': 'test/plugins/contract.test.ts (every registered module, its name, order and options)',
  'src/cluster/primary.ts': 'test/e2e/workers.test.ts (workers need a forked primary)',
  'plugins/gate/judge.ts': 'test/plugins/gate/index.test.ts and concurrency.test.ts (the stages through the plugin)',
  'plugins/gate/pool/pool-worker.ts': 'test/plugins/gate/pool/work-pool.test.ts (it runs inside the pool threads)',
  'plugins/gate/pool/simulation/estimate.ts': 'test/plugins/gate/estimation.test.ts (it runs inside the pool threads, on the devnet)',
  'plugins/gate/pool/timed-worker.ts':
    'test/plugins/gate/pool/work-pool.test.ts (the entry of the pool threads; the charge it measures, test/e2e/metered-work.test.ts)',
  'protocol/evm/overlay-state.ts': 'test/plugins/gate/pool/simulation/simulate.test.ts (state read for frames)',
  'protocol/evm/frame-runner.ts': 'test/plugins/gate/pool/simulation/simulate.test.ts and test/conformance/ (both uses of the runner)',
  'protocol/evm/state-gas-owners.ts': 'test/conformance/state-gas.test.ts (refills across frames, batches and reverts)',
  'protocol/evm/execute.ts': 'test/conformance/ (execution cases) and test/devnet/frames/frame-chain.test.ts',
  'protocol/index.ts': 'test/protocol/boundary.test.ts (the door: re-exports only)',
  'devnet/anvil.ts': 'test/helpers/el.ts starts every anvil of the suite through it; test/devnet/devnet.test.ts',
  'devnet/rpc.ts': "test/devnet/frames/frame-chain.test.ts and test/conformance/runner.ts (the devnet's every call to anvil)",
  'devnet/frames/block-reader.ts': 'test/devnet/frames/frame-chain.test.ts (what the frame runner reads of anvil)',
  'client/index.ts': 'test/client/pack.test.ts (the door, imported by its package name from an npm pack install)',
  'client/rpc.ts': 'test/client/viem.test.ts, ethers.test.ts and pack.test.ts (requests and answers against the devnet)',
  'devnet/frames/frame-blocks.ts': 'test/devnet/frames/rpc-shapes.test.ts (blocks, counts and by index with a frame transaction)',
  'devnet/frames/frame-logs.ts': "test/devnet/frames/rpc-shapes.test.ts (eth_getBlockReceipts and eth_getLogs with the frames')",
  'devnet/stripped/stripped-blocks.ts': 'test/devnet/stripped/methods.test.ts (the stripped blocks behind the methods)',
  'examples/chain.ts': 'test/examples/examples.test.ts (every example runs against the devnet)',
  'examples/contract-account-transfer.ts': 'test/examples/examples.test.ts',
  'examples/mldsa-transfer.ts': 'test/examples/examples.test.ts',
  'examples/clients/ethers.ts': 'test/examples/clients.test.ts',
  'examples/clients/indexer.ts': 'test/examples/clients.test.ts',
  'examples/clients/viem.ts': 'test/examples/clients.test.ts',
  'examples/clients/subscribe.ts': 'test/examples/clients.test.ts',
  'src/subscriptions.ts': 'test/src/websocket.test.ts (eth_subscribe and eth_unsubscribe, their limits per connection and source)',
  'src/cache/finality.ts': 'test/src/cache/index.test.ts (the finalized head followed, and going back)',
  'plugins/rate-limit/fleet-sync.ts':
    'test/plugins/rate-limit/bucket.test.ts (a bucket in a fleet, two instances on a real Redis) and test/src/fleet.test.ts',
  'protocol/evm/index.ts': 'test/protocol/boundary.test.ts (the EVM door: re-exports only)',
  'protocol/refusal.ts': 'test/plugins/gate/errors.test.ts (refusals as the gate answers them)',
  'protocol/evm/evm-types.ts': 'test/protocol/mempool/trace-rules.test.ts (the fork opcodes the trace rules wrap, and their halts)',
  'protocol/evm/frame-opcodes.ts': 'test/plugins/gate/pool/simulation/simulate.test.ts (the opcodes run in frames)',
  'protocol/mempool/index.ts': 'test/protocol/boundary.test.ts (the mempool door: re-exports only)',
};

function modulesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

const mirrorOf = (module: string) => `test/${module.replace(/\.ts$/, '.test.ts')}`;

describe('the test tree', () => {
  const modules = [
    ...modulesUnder('src'),
    ...modulesUnder('plugins'),
    ...modulesUnder('protocol'),
    ...modulesUnder('client'),
    ...modulesUnder('devnet'),
    ...modulesUnder('examples'),
  ];

  it('has a test at the mirrored path of every module, or names where its contract is held', () => {
    const untested = modules.filter((module) => !existsSync(join(ROOT, mirrorOf(module))) && !(module in COVERED_ELSEWHERE));
    expect(untested).to.deep.equal([]);
  });

  it('names only modules that exist and still have no mirrored test', () => {
    const stale = Object.keys(COVERED_ELSEWHERE).filter((module) => !modules.includes(module) || existsSync(join(ROOT, mirrorOf(module))));
    expect(stale).to.deep.equal([]);
  });

  it('has no unit test without its module (e2e/, helpers/ and the tree-wide suites aside)', () => {
    const orphans = [
      ...modulesUnder('test/src'),
      ...modulesUnder('test/plugins'),
      ...modulesUnder('test/protocol'),
      ...modulesUnder('test/client'),
    ]
      .filter((file) => file.endsWith('.test.ts'))
      .filter((file) => !existsSync(join(ROOT, file.replace(/^test\//, '').replace(/\.test\.ts$/, '.ts'))));
    expect(orphans).to.deep.equal(ORPHANS_ALLOWED);
  });
});

/** Unit suites named after a concern rather than a module, each spanning several modules. */
const ORPHANS_ALLOWED = [
  'test/plugins/contract.test.ts',
  'test/plugins/gate/concurrency.test.ts',
  'test/protocol/boundary.test.ts',
  // The module as a wallet installs it (npm pack, an empty project).
  'test/client/pack.test.ts',
];
