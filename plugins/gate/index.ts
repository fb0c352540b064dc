/**
 * gate: answers every `eth_sendRawTransaction` (spec 4.3, 4.4, 7). What it admits is
 * forwarded to the submission target and answered with keccak-256 of the raw bytes; what it
 * refuses gets a synchronous -32000 with a reason and never reaches consensus.
 *
 * The order of checks, cheapest first; each stage runs only if every earlier one passed:
 *
 *   params shape ─► duplicate window ─► cached verdict        (memory, or the fleet's Redis)
 *     ─► decode, static checks                                (CPU, no state)
 *     ─► frame signatures, priced by prefix gas first          (worker threads)
 *     ─► head state: nonce, in-flight, base fee, payer funds  (EL reads, shared per head)
 *     ─► frame transactions: the validation prefix            (direct evaluation, or the EVM)
 *     ─► the EL's validation method, when configured          (off by default)
 *     ─► forward to the submission target
 *
 * Fails closed: an EL that cannot be read gives -32603 and nothing is forwarded.
 *
 * It also estimates frame transactions' gas (`svc_estimateFrameGas`, and `eth_estimateGas` of a
 * frame transaction: estimation.ts) in its simulation lane.
 * Order: after size-limit (sizes capped before decoding), allowlist and rate-limit.
 *
 * The validator's stages are in judge.ts; a follower relays (follower.ts). The rest, by what
 * it does: submission/ reads what was sent (the raw bytes, the decoded transaction, EIP-7966's
 * receipt wait); head/ judges it against head state (admission, the validation prefix, the EL's
 * opinion, what a verdict read, revalidation); ledger/ remembers (the duplicate window, cached
 * verdicts, in-flight slots, paymasters' turns); pool/ works off the event loop (the worker
 * threads, simulation/ in them). Failures are errors.ts, their wire answers answers.ts.
 */
import {
  SOURCE,
  SUBMISSION_ONLY,
  SYNC_SUBMISSION_METHOD,
  throttledWarning,
  type PluginModule,
  type RequestContext,
  type Verdict,
} from '../../src/plugin.js';
import { createElValidation } from './head/el-validation.js';
import { createEstimator, ESTIMATION_METHODS, isEstimation } from './estimation.js';
import { createFollower } from './follower.js';
import { holdPool } from './pool/held-pool.js';
import { createJudge, rejudgeWith } from './judge.js';
import { Revalidator } from './head/revalidation.js';
import { carriedLedger, createLedger, MemoryLedger, type LedgerOptions } from './ledger/ledger.js';
import { parseGateOptions, type GateOptions } from './options.js';
import { PaymasterTurns } from './ledger/paymaster-turns.js';
import { sharedTurns } from './ledger/paymaster-turns-shared.js';
import { readRawTransaction } from './submission/raw-transaction.js';
import { evmPatchApplied } from '../../protocol/evm/index.js';
import { cryptoBackend } from '../../protocol/index.js';
import { HeadState } from './head/state.js';
import { rawParams, syncTimeoutOf } from './submission/sync.js';
import { createWorkPool } from './pool/work-pool.js';

/** Submissions, and the gas estimates of frame transactions (estimation.ts). */
const GATED_METHODS: ReadonlySet<string> = new Set([...SUBMISSION_ONLY, ...ESTIMATION_METHODS]);

/** The portable-crypto and unpatched-EVM lines are said once per process, not at every reload. */
let portableCryptoSaid = false;
let unpatchedSaid = false;

export const gate: PluginModule<GateOptions> = {
  name: 'gate',
  parseOptions: parseGateOptions,
  shared: { 'gate-ledger': (init) => new MemoryLedger(init as LedgerOptions), 'gate-turns': () => new PaymasterTurns() },
  create(options, { stateReads, submit, relayTo, log, shared, metrics, carried }) {
    if (options.role === 'follower') {
      // The validator holds a sync submission's answer for up to its wait: the relay must outwait it.
      return createFollower(options.relayUrl === undefined ? undefined : relayTo(options.relayUrl, options.syncTimeoutMaxMs));
    }
    const state = new HeadState(stateReads, options.headCacheMs);
    void evmPatchApplied().then((applied) => {
      if (!applied && !unpatchedSaid) {
        unpatchedSaid = true;
        log.error(
          'gate: @ethereumjs/evm is not patched (npm ci ran without scripts?): frame transactions that need the EVM are refused ("simulation error")',
        );
      }
    });
    if (cryptoBackend.kind === 'portable' && !portableCryptoSaid) {
      portableCryptoSaid = true;
      log.warn(
        `gate: keccak-256 and secp256k1 run on the pure-JS @noble implementations (${cryptoBackend.why}): each submission costs more CPU (BENCHMARKS.md, "Portable crypto")`,
      );
    }
    const simulationBug = throttledWarning(
      log,
      'gate: a simulation failed unexpectedly, refused as "simulation error" (throttled: count since the last line)',
    );
    const limits = { threads: options.threads, queueMax: options.queueMax, queuePerSource: options.queuePerSource };
    // The threads read the EL themselves: its address and timeouts, not this process's objects.
    const { reachability: _inThisProcess, ...execution } = stateReads.options;
    const settings = {
      execution,
      simulationBudgetMs: options.simulationBudgetMs,
      estimateBudgetMs: options.estimateBudgetMs,
    };
    const { pool, letGo } = holdPool(carried, JSON.stringify({ limits, settings }), () =>
      createWorkPool(limits, settings, (bug) => simulationBug({ bug })),
    );
    const ledger = createLedger(shared, options, carriedLedger(carried, options));
    const revalidations = metrics.counter(
      'svc_ingress_gate_revalidations_total',
      'Pending frame transactions looked at again at a new head: unchanged, kept (judged again), released (now skipped), done.',
      ['outcome'],
    );
    // At skip_after_blocks 1 nothing stays pending past the first block after its ordering: nothing to look at again.
    const revalidator =
      options.skipAfterBlocks <= 1n
        ? undefined
        : new Revalidator({
            state,
            ledger,
            skipAfterBlocks: options.skipAfterBlocks,
            rejudge: rejudgeWith({ state, pool }),
            counted: (outcome) => revalidations.inc(outcome),
            log,
          });
    const verdictFor = createJudge({
      paymasterTurns: sharedTurns(
        shared,
        carried.keep('gate:paymaster-turns', () => new PaymasterTurns()),
      ),
      options,
      state,
      ledger,
      revalidator,
      pool,
      validate: createElValidation(stateReads, options.validationMethod),
      submit,
      stateReads,
      verdicts: metrics.counter(
        'svc_ingress_gate_verdicts_total',
        'Submission verdicts: admitted, refused (by reason), cached (a refusal replayed).',
        ['verdict', 'reason'],
      ),
      sequenced: () => metrics.sequenced(),
      unavailable: throttledWarning(log, 'gate: execution layer unavailable, submissions refused (throttled: count since the last line)'),
      bug: throttledWarning(log, 'gate: judging failed unexpectedly, refused as "gate-error" (throttled: count since the last line)'),
    });
    const estimate = createEstimator(pool, options.chainId);
    return {
      name: 'gate',
      methods: GATED_METHODS,
      handle(ctx: RequestContext): Verdict | Promise<Verdict> {
        const { request, facts, peer } = ctx;
        if (isEstimation(request.method, request.params)) return estimate(ctx);
        if (!SUBMISSION_ONLY.has(request.method)) return undefined;
        const sync = request.method === SYNC_SUBMISSION_METHOD ? { timeoutMs: syncTimeoutOf(request.params, options) } : undefined;
        // Without rate-limit, the TCP peer is the source the pool serves in turn.
        const source = facts.get(SOURCE) ?? peer.address;
        return verdictFor(readRawTransaction(rawParams(request.params, request.method)), ctx, sync, source);
      },
      close: () => {
        revalidator?.close();
        return letGo();
      },
    };
  },
};
