import { expect } from 'chai';
import { keccak256, Transaction, Wallet } from 'ethers';
import { request } from 'undici';
import { startDevnet, type Devnet } from '../../devnet/devnet.js';
import { startNodeStandIn, type CommitRecord as Commit } from '../../devnet/node.js';
import { createLogger } from '../../src/log.js';
import { secp256k1Entry, selfTransfer, signed } from '../../support/frames.js';
import { call, receiptOf, rpc } from '../../support/http.js';
import { DEV_KEYS } from '../../support/keys.js';
import { OPERATOR_TOKEN } from '../helpers/ingress.js';
import { until } from '../helpers/until.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const transfer = (key: string, nonce: number) =>
  new Wallet(key).signTransaction({
    chainId: 8141,
    nonce,
    to: RECIPIENT,
    value: 1n,
    gasLimit: 21_000,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 0n,
    type: 2,
  });

describe('devnet: node-local methods answered live through the ingress', () => {
  let devnet: Devnet;
  const logs: string[] = [];
  let url: string;
  const commits = async (since: number | null, limit?: number) =>
    (await call<{ commits: Commit[] }>(url, 'svc_getRecentCommits', limit === undefined ? [since] : [since, limit])).commits;

  before(async () => {
    process.env.SVC_OPERATOR_TOKEN = OPERATOR_TOKEN;
    devnet = await startDevnet(
      {
        port: 0,
        metricsPort: 0,
        node: { commitIntervalMs: 40, blockIntervalMs: 200, heartbeatCommits: 25, checkpointEvery: 5 },
        // The skip counters are shown with a gapped transaction the EL skips: the gate lets it through.
        configure: (config) => ({
          ...config,
          plugins: config.plugins.map((entry) =>
            entry.module.name === 'gate' ? { ...entry, options: { ...(entry.options as object), contiguousNonces: false } } : entry,
          ),
        }),
      },
      createLogger('debug', (line) => logs.push(line)),
    );
    url = devnet.ingress.url;
  });
  after(() => devnet.stop());

  it('orders a transfer into a commit, closes its EL block in a later commit, and mines it', async () => {
    const raw = await transfer(DEV_KEYS[1], 0);
    const before = await commits(null, 1);
    const reply = await rpc(url, 'eth_sendRawTransaction', [raw], 9);
    expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 9, result: keccak256(raw) }));
    const receipt = await receiptOf(url, keccak256(raw));
    // A stretch of commits from just before the submission on: a block per 200 ms, a commit per 40 ms.
    const page = await until(
      () => commits(before[0]?.index ?? 0, 128),
      (p) => p.length >= 15,
      'fifteen commits',
    );
    const ordering = page.find((c) => c.transactions === 1)!;
    expect(ordering, 'the commit that ordered it').to.not.equal(undefined);
    const closing = page.find((c) => c.elBlocks.includes(receipt.blockNumber))!;
    expect(closing.index).to.be.greaterThan(ordering.index);
    for (const commit of page) {
      expect(Object.keys(commit)).to.have.members([
        'index',
        'digest',
        'leaderAuthority',
        'leaderRound',
        'leaderDigest',
        'timestampMs',
        'blocks',
        'transactions',
        'elBlocks',
      ]);
    }
    expect(page.filter((c) => c.elBlocks.length === 0 && c.transactions === 0).length, 'commits that closed nothing').to.be.greaterThan(0);
  });

  it('defaults limit to 64 and caps it at 128', async () => {
    await until(
      () => commits(null, 128),
      (page) => page.length === 128,
      '128 commits',
    );
    expect(await commits(null)).to.have.length(64);
    expect(await commits(null, 500)).to.have.length(128);
  });

  it('pages with since from the first commit: every commit exactly once, in order', async () => {
    const top = (await commits(null, 1))[0]!.index;
    const seen: number[] = [];
    let since = 0;
    while (since < top) {
      const page = await commits(since, 7);
      expect(page.length, `a page after ${since}`).to.be.within(1, 7);
      seen.push(...page.map((c) => c.index));
      since = page[page.length - 1]!.index;
    }
    expect(seen.slice(0, top)).to.deep.equal(Array.from({ length: top }, (_, i) => i + 1));
  });

  for (const [label, params, why] of [
    ['a negative since', [-1], 'since must be null or a non-negative integer commit index'],
    ['a string since', ['0x1'], 'since must be null or a non-negative integer commit index'],
    ['a zero limit', [null, 0], 'limit must be a positive integer'],
    ['three params', [null, 1, 2], 'expected [since, limit]'],
  ] as const) {
    it(`refuses ${label} with -32602`, async () => {
      expect((await rpc(url, 'svc_getRecentCommits', [...params], 4)).text).to.equal(
        JSON.stringify({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: `invalid params: ${why}` } }),
      );
    });
  }

  it('emits an empty heartbeat block after the configured blockless commits', async () => {
    const stats = await until(
      () => call<{ driver: Record<string, number> }>(url, 'svc_dropStats'),
      (s) => s.driver.idle_heartbeat_blocks_total! > 0,
      'a heartbeat block',
    );
    expect(stats.driver.idle_heartbeat_blocks_total).to.be.at.least(1);
  });

  it('counts a transaction the EL skips (nonce too high) and what the gate sequenced', async () => {
    const before = await call<{ driver: Record<string, number>; ingress: Record<string, number>; el: Record<string, number> }>(
      url,
      'svc_dropStats',
    );
    // Nonce 1 with nothing at 0: within the gate's gap bound (contiguous_nonces off here), so admitted, then skipped by the EL.
    const gapped = await transfer(DEV_KEYS[2], 1);
    expect(JSON.parse((await rpc(url, 'eth_sendRawTransaction', [gapped])).text)).to.have.property('result');
    const after = await until(
      () => call<typeof before>(url, 'svc_dropStats'),
      (s) => s.el.nonce_too_high! > before.el.nonce_too_high!,
      'the skip to be counted',
    );
    expect(after.el.nonce_too_high).to.equal(before.el.nonce_too_high! + 1);
    expect(after.el.total).to.equal(before.el.total! + 1);
    expect(after.driver.forced_txs_dropped_total).to.equal(before.driver.forced_txs_dropped_total! + 1);
    expect(after.ingress.txs_sequenced_total).to.equal(before.ingress.txs_sequenced_total! + 1);
    for (const group of [after.driver, after.ingress, after.el]) {
      for (const value of Object.values(group)) expect(Number.isSafeInteger(value)).to.equal(true);
    }
    expect(Object.keys(after.driver)).to.have.members([
      'forced_txs_total',
      'forced_txs_dropped_total',
      'blocks_with_drops_total',
      'skip_all_dropped_total',
      'finalizer_rejected_skips_total',
      'idle_heartbeat_blocks_total',
    ]);
    expect(Object.keys(after.ingress)).to.have.members([
      'txs_sequenced_total',
      'own_blocks_gc_total',
      'txs_gc_dropped_total',
      'status_lost_total',
      'status_watchers',
    ]);
    expect(Object.keys(after.el)).to.have.members([
      'fee_cap_too_low',
      'gas_overflow',
      'insufficient_funds',
      'nonce_too_high',
      'nonce_too_low',
      'other',
      'size_overflow',
      'total',
    ]);
  });

  it('counts a frame transaction the execution stand-in leaves out by its reason', async () => {
    const before = await call<{ driver: Record<string, number>; el: Record<string, number> }>(url, 'svc_dropStats');
    // Straight to the node stand-in, as if ordered: the gate would refuse a nonce the sender does not have.
    const sender = new Wallet(DEV_KEYS[4]);
    const raw = signed({ ...selfTransfer(sender.address.toLowerCase(), 0x01), nonce: 5n }, [
      (digest) => secp256k1Entry(sender.privateKey, digest),
    ]);
    expect(await call(devnet.node.url, 'eth_sendRawTransaction', [raw])).to.equal(keccak256(raw));
    const after = await until(
      () => call<typeof before>(url, 'svc_dropStats'),
      (s) => s.el.nonce_too_high! > before.el.nonce_too_high!,
      'the skip to be counted',
    );
    expect([after.el.total, after.driver.forced_txs_dropped_total, after.driver.blocks_with_drops_total]).to.deep.equal([
      before.el.total! + 1,
      before.driver.forced_txs_dropped_total! + 1,
      before.driver.blocks_with_drops_total! + 1,
    ]);
    expect(await call(url, 'eth_getTransactionReceipt', [keccak256(raw)])).to.equal(null);
  });

  it("answers svc_historyStatus through the ingress from the devnet's EL front", async () => {
    const status = await call<Record<string, string>>(url, 'svc_historyStatus');
    expect(status).to.have.all.keys('tier', 'headBlock', 'earliestFullBody', 'historyCutoff', 'persistedState');
    expect(status.tier).to.equal('tx-history');
    expect(BigInt(status.headBlock!)).to.equal(BigInt(await call<string>(url, 'eth_blockNumber')));
  });

  it('answers svc_getStrippedTransaction and svc_getSignatureSidecar through the ingress with live data', async () => {
    const raw = await transfer(DEV_KEYS[3], 0);
    const hash = await call<string>(url, 'eth_sendRawTransaction', [raw]);
    const receipt = await receiptOf(url, hash);
    const stripped = await call<{ blockNumber: string; strippedTransaction: string; proof: string[] }>(url, 'svc_getStrippedTransaction', [
      hash,
    ]);
    expect(stripped.blockNumber).to.equal(receipt.blockNumber);
    expect(stripped.strippedTransaction).to.equal(Transaction.from(raw).unsignedSerialized);
    const sidecar = await call<{ transactions: Array<{ transactionHash: string; witness: string[] }> }>(url, 'svc_getSignatureSidecar', [
      receipt.blockNumber,
    ]);
    expect(sidecar.transactions).to.deep.include({ transactionHash: hash, witness: [Transaction.from(raw).signature!.serialized] });
  });

  it('answers svc_nodeHealth with the operator token, every field included', async () => {
    const reply = JSON.parse((await rpc(url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}` })).text);
    expect(reply.result).to.have.all.keys(
      'latestHandledCommit',
      'latestCertifiedCheckpoint',
      'retention',
      'observer',
      'snapshotServing',
      'freshness',
      'dataDirDisk',
    );
    expect(reply.result.latestHandledCommit).to.be.a('number').above(0);
    expect(reply.result.latestCertifiedCheckpoint).to.include.keys('sequence', 'commitIndex');
    expect(reply.result.dataDirDisk).to.include.keys('totalBytes', 'freeBytes', 'usedBytes');
    expect(reply.result.dataDirDisk.totalBytes).to.be.above(0);
  });

  it('answers svc_nodeHealth without the token byte for byte like an unknown method, and never logs the token', async () => {
    const refused = await rpc(url, 'svc_nodeHealth', [], 3);
    const unknown = await rpc(url, 'svc_noSuchThing', [], 3);
    expect(refused.text).to.equal(unknown.text);
    expect(refused.status).to.equal(unknown.status);
    expect(logs.length).to.be.greaterThan(0);
    expect(logs.join('')).to.not.include(OPERATOR_TOKEN);
  });

  it('serves the bootstrap methods on an anchor (the devnet is one)', async () => {
    expect(await call<{ checkpoints: unknown[] }>(url, 'svc_getCheckpointChain')).to.have.property('checkpoints').that.is.not.empty;
    expect(await call<{ entries: unknown[] }>(url, 'svc_getJournalTail', [5]))
      .to.have.property('entries')
      .with.length(5);
  });

  it('exports every spec gauge of the node on /metrics', async () => {
    const text = await (await request(`${devnet.ingress.metricsUrl}/metrics`)).body.text();
    for (const gauge of [
      'checkpoint_lag_commits',
      'checkpoint_freshness_alarms_total',
      'retention_target_floor',
      'retention_disk_guard_active',
      'retention_disk_free_bytes',
      'observer_stranded',
      'follower_stalled_seconds',
      'archive_cert_gap_sequences',
      'block_key_rotations_applied_total',
    ]) {
      expect(text).to.match(new RegExp(`^svc_${gauge} \\d+$`, 'm'));
    }
    // ...beside the ingress's own account of what the gate did.
    expect(Number(/^svc_ingress_gate_verdicts_total\{verdict="admitted",reason=""\} (\d+)$/m.exec(text)?.[1])).to.be.at.least(2);
  });
});

describe('devnet: bootstrap methods and a node that is down', () => {
  let devnet: Devnet;
  before(async () => {
    devnet = await startDevnet(
      {
        port: 0,
        metricsPort: 0,
        configure: (config) => ({
          ...config,
          plugins: config.plugins.map((entry) =>
            entry.module.name === 'local-methods' ? { ...entry, options: { ...(entry.options as object), bootstrapAnchor: false } } : entry,
          ),
        }),
      },
      createLogger('error'),
    );
  });
  after(() => devnet.stop());

  it('answers the bootstrap methods like unknown methods when not an anchor', async () => {
    const unknown = (await rpc(devnet.ingress.url, 'svc_noSuchThing', [], 2)).text;
    expect((await rpc(devnet.ingress.url, 'svc_getCheckpointChain', [], 2)).text).to.equal(unknown);
    expect((await rpc(devnet.ingress.url, 'svc_getJournalTail', [], 2)).text).to.equal(unknown);
  });

  it('answers node-local methods with a clear error while the node is down, keeps serving reads, and recovers when it is back', async () => {
    const port = Number(new URL(devnet.node.url).port);
    await devnet.node.stop();
    expect((await rpc(devnet.ingress.url, 'svc_dropStats', [], 6)).text).to.equal(
      '{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"node unavailable: the consensus node did not answer"}}',
    );
    expect((await rpc(devnet.ingress.url, 'eth_chainId')).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
    const restarted = await startNodeStandIn({ elUrl: devnet.anvil.url, port });
    try {
      expect(JSON.parse((await rpc(devnet.ingress.url, 'svc_dropStats', [], 7)).text)).to.have.nested.property(
        'result.driver.forced_txs_total',
      );
    } finally {
      await restarted.stop();
    }
  });
});
