import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parse as parseYaml } from 'yaml';
import { parseGateOptions, type GateOptions } from '../../../plugins/gate/options.js';
import { ConfigError, OptionsReader } from '../../../src/config/reader.js';

/** The gate's place in the shipped chain: load.ts names its options `plugins[5].gate`. */
const PATH = 'plugins[5].gate';
/** As load.ts builds it for one entry `- gate: {...}` (or a bare `- gate`: undefined). */
const parse = (raw?: Record<string, unknown> | null): GateOptions => parseGateOptions(OptionsReader.of(PATH, raw));

function complaint(raw: Record<string, unknown>): string {
  try {
    parse(raw);
  } catch (err) {
    expect(err, 'a ConfigError').to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  return 'accepted';
}

/** The gate entry of config/ingress.yaml, as YAML reads it. */
function shippedGateOptions(): Record<string, unknown> {
  const doc = parseYaml(readFileSync('config/ingress.yaml', 'utf8')) as { plugins: unknown[] };
  const entry = doc.plugins.find((p): p is { gate: Record<string, unknown> } => typeof p === 'object' && p !== null && 'gate' in p);
  expect(entry, 'config/ingress.yaml lists gate with options').to.not.equal(undefined);
  return entry!.gate;
}

/** What config/ingress.yaml documents, value for value; threads: "every core but one, at most 4". */
const DOCUMENTED: GateOptions = {
  role: 'validator',
  relayUrl: undefined,
  chainId: 8141n,
  blockGasLimit: 60_000_000n,
  nonceGapMax: 64n,
  inFlightCap: 16,
  frameInFlightCap: 1,
  contiguousNonces: true,
  skipAfterBlocks: 1n,
  duplicateWindowMs: 60_000,
  verdictTtlMs: 30_000,
  maxEntries: 200_000,
  headCacheMs: 100,
  validationMethod: undefined,
  syncTimeoutMs: 2_000,
  syncTimeoutMaxMs: 10_000,
  threads: Math.max(1, Math.min(4, availableParallelism() - 1)),
  queueMax: 256,
  queuePerSource: 4,
  simulationBudgetMs: 200,
  estimateBudgetMs: 1_000,
  prefixGasBudget: 100_000n,
  prefixStateGasBudget: 500_000n,
};

describe('gate: options', () => {
  describe('defaults', () => {
    it('a bare `- gate` gets the values config/ingress.yaml documents', () => {
      expect(parse(undefined)).to.deep.equal(DOCUMENTED);
      expect(parse(null)).to.deep.equal(DOCUMENTED);
    });

    it('the shipped gate entry reads the same as the defaults: it spells them out, nothing more', () => {
      const shipped = shippedGateOptions();
      expect(shipped.role, 'the shipped entry is read at all').to.equal('validator');
      expect(parse(shipped)).to.deep.equal(parse(undefined));
    });
  });

  it('reads every key into its field', () => {
    const options = parse({
      role: 'follower',
      relay_url: 'https://rpc.example.org',
      chain_id: 31337,
      block_gas_limit: 30_000_000,
      nonce_gap_max: 0,
      in_flight_cap: 4,
      frame_in_flight_cap: 2,
      contiguous_nonces: false,
      skip_after_blocks: 5,
      duplicate_window_ms: 1_000,
      verdict_ttl_ms: 2_000,
      cache_max_entries: 10,
      head_cache_ms: 0,
      validation_method: 'svc_validateTransaction',
      sync_timeout_ms: 500,
      sync_timeout_max_ms: 600,
      threads: 3,
      queue_max: 7,
      queue_per_source: 2,
      simulation_budget_ms: 250,
      estimate_budget_ms: 500,
      prefix_gas_budget: 100_001,
      prefix_state_gas_budget: 500_001,
    });
    expect(options).to.deep.equal({
      role: 'follower',
      relayUrl: 'https://rpc.example.org',
      chainId: 31337n,
      blockGasLimit: 30_000_000n,
      nonceGapMax: 0n,
      inFlightCap: 4,
      frameInFlightCap: 2,
      contiguousNonces: false,
      skipAfterBlocks: 5n,
      duplicateWindowMs: 1_000,
      verdictTtlMs: 2_000,
      maxEntries: 10,
      headCacheMs: 0,
      validationMethod: 'svc_validateTransaction',
      syncTimeoutMs: 500,
      syncTimeoutMaxMs: 600,
      threads: 3,
      queueMax: 7,
      queuePerSource: 2,
      simulationBudgetMs: 250,
      estimateBudgetMs: 500,
      prefixGasBudget: 100_001n,
      prefixStateGasBudget: 500_001n,
    } satisfies GateOptions);
  });

  describe('role and relay_url', () => {
    it('takes a follower without relay_url (it refuses submissions itself)', () => {
      expect(parse({ role: 'follower' })).to.include({ role: 'follower', relayUrl: undefined });
    });

    it('reads relay_url: null as absent', () => {
      expect(parse({ role: 'follower', relay_url: null })).to.include({ role: 'follower', relayUrl: undefined });
    });

    for (const [label, raw, message] of [
      ['a role other than validator or follower', { role: 'leader' }, `${PATH}.role: must be validator or follower`],
      ['a role in capitals', { role: 'Validator' }, `${PATH}.role: must be validator or follower`],
      ['a role that is not a string', { role: 1 }, `${PATH}.role: must be a non-empty string`],
      ['relay_url on an implicit validator', { relay_url: 'https://rpc.example.org' }, `${PATH}.relay_url: applies only to role: follower`],
      [
        'relay_url on an explicit validator',
        { role: 'validator', relay_url: 'https://rpc.example.org' },
        `${PATH}.relay_url: applies only to role: follower`,
      ],
      [
        'a relay_url that is not http(s)',
        { role: 'follower', relay_url: 'ws://rpc.example.org' },
        `${PATH}.relay_url: must be an http:// or https:// URL without credentials`,
      ],
      [
        'a relay_url with credentials',
        { role: 'follower', relay_url: 'https://user:pw@rpc.example.org' },
        `${PATH}.relay_url: must be an http:// or https:// URL without credentials`,
      ],
      ['an empty relay_url', { role: 'follower', relay_url: '' }, `${PATH}.relay_url: must be a non-empty string`],
    ] as const) {
      it(`refuses ${label}`, () => {
        expect(complaint(raw)).to.equal(message);
      });
    }
  });

  describe('bounds', () => {
    for (const [label, raw, value] of [
      ['nonce_gap_max: 0 (no gap at all)', { nonce_gap_max: 0 }, { nonceGapMax: 0n }],
      ['head_cache_ms: 0 (no head cache)', { head_cache_ms: 0 }, { headCacheMs: 0 }],
      ['head_cache_ms: 5000, the most', { head_cache_ms: 5_000 }, { headCacheMs: 5_000 }],
      ['threads: 1', { threads: 1 }, { threads: 1 }],
      ['threads: 64, the most', { threads: 64 }, { threads: 64 }],
      ['prefix_gas_budget at the reference 100000', { prefix_gas_budget: 100_000 }, { prefixGasBudget: 100_000n }],
      ['prefix_state_gas_budget at the reference 500000', { prefix_state_gas_budget: 500_000 }, { prefixStateGasBudget: 500_000n }],
      ['a chain id up to 2^53 - 1, exactly', { chain_id: Number.MAX_SAFE_INTEGER }, { chainId: BigInt(Number.MAX_SAFE_INTEGER) }],
    ] as const) {
      it(`takes ${label}`, () => {
        expect(parse(raw)).to.deep.include(value);
      });
    }

    for (const [label, raw, message] of [
      ['a negative nonce_gap_max', { nonce_gap_max: -1 }, `${PATH}.nonce_gap_max: must be an integer >= 0`],
      ['a negative head_cache_ms', { head_cache_ms: -1 }, `${PATH}.head_cache_ms: must be an integer >= 0`],
      ['head_cache_ms past 5000', { head_cache_ms: 5_001 }, `${PATH}.head_cache_ms: must be at most 5000`],
      ['threads: 0', { threads: 0 }, `${PATH}.threads: must be a positive integer`],
      ['threads past 64', { threads: 65 }, `${PATH}.threads: must be at most 64`],
      ['a prefix_gas_budget below the reference', { prefix_gas_budget: 99_999 }, `${PATH}.prefix_gas_budget: must be an integer >= 100000`],
      [
        'a prefix_state_gas_budget below the reference',
        { prefix_state_gas_budget: 499_999 },
        `${PATH}.prefix_state_gas_budget: must be an integer >= 500000`,
      ],
      ['chain_id: 0', { chain_id: 0 }, `${PATH}.chain_id: must be a positive integer`],
      ['a chain id written as hex text', { chain_id: '0x1fcd' }, `${PATH}.chain_id: must be a positive integer`],
      ['a zero block_gas_limit', { block_gas_limit: 0 }, `${PATH}.block_gas_limit: must be a positive integer`],
      ['a zero in_flight_cap', { in_flight_cap: 0 }, `${PATH}.in_flight_cap: must be a positive integer`],
      ['a zero frame_in_flight_cap', { frame_in_flight_cap: 0 }, `${PATH}.frame_in_flight_cap: must be a positive integer`],
      ['a zero skip_after_blocks', { skip_after_blocks: 0 }, `${PATH}.skip_after_blocks: must be a positive integer`],
      ['a zero duplicate_window_ms', { duplicate_window_ms: 0 }, `${PATH}.duplicate_window_ms: must be a positive integer`],
      ['a zero verdict_ttl_ms', { verdict_ttl_ms: 0 }, `${PATH}.verdict_ttl_ms: must be a positive integer`],
      ['a zero cache_max_entries', { cache_max_entries: 0 }, `${PATH}.cache_max_entries: must be a positive integer`],
      ['a zero sync_timeout_ms', { sync_timeout_ms: 0 }, `${PATH}.sync_timeout_ms: must be a positive integer`],
      ['a zero sync_timeout_max_ms', { sync_timeout_max_ms: 0 }, `${PATH}.sync_timeout_max_ms: must be a positive integer`],
      [
        'a default wait above the most a client may ask',
        { sync_timeout_ms: 20_000 },
        `${PATH}.sync_timeout_ms: must not exceed sync_timeout_max_ms (10000)`,
      ],
      ['a zero queue_max', { queue_max: 0 }, `${PATH}.queue_max: must be a positive integer`],
      ['a zero queue_per_source', { queue_per_source: 0 }, `${PATH}.queue_per_source: must be a positive integer`],
      ['a zero simulation_budget_ms', { simulation_budget_ms: 0 }, `${PATH}.simulation_budget_ms: must be a positive integer`],
      ['simulation_budget_ms past 10000', { simulation_budget_ms: 10_001 }, `${PATH}.simulation_budget_ms: must be at most 10000`],
      ['estimate_budget_ms past 60000', { estimate_budget_ms: 60_001 }, `${PATH}.estimate_budget_ms: must be at most 60000`],
      ['a fractional duplicate_window_ms', { duplicate_window_ms: 1.5 }, `${PATH}.duplicate_window_ms: must be a positive integer`],
      ['an empty validation_method', { validation_method: '' }, `${PATH}.validation_method: must be a non-empty string`],
      ['max_entries (the key is cache_max_entries)', { max_entries: 10 }, `${PATH}.max_entries: unknown key`],
    ] as const) {
      it(`refuses ${label}`, () => {
        expect(complaint(raw)).to.equal(message);
      });
    }
  });
});
