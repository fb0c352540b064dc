import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { defaultHeavyConnections, parseConfig } from '../../../src/config/load.js';
import { scratchDir } from '../../../support/scratch.js';

const base = (plugins: string, extra = '') => `listen: 127.0.0.1:8545
upstreams:
  execution: http://127.0.0.1:18545
${extra}
plugins:${plugins}`;

/** A token file with `mode`, in a fresh temporary directory. */
const tokenFile = (mode: number, token = 'a-token-of-24-characters') => {
  const path = join(scratchDir('svc-token'), 'token');
  writeFileSync(path, `${token}\n`, { mode });
  return path;
};
process.env.SVC_BLANK_TOKEN_FOR_TEST = ' '.repeat(16);
process.env.SVC_GOOD_TOKEN_FOR_TEST = 'a-token-of-24-characters';
const worldReadable = tokenFile(0o644);

const names = (yaml: string) => parseConfig(yaml).plugins.map((p) => p.module.name);

describe('config', () => {
  it('loads the shipped production example with the default order pinned', () => {
    process.env.SVC_OPERATOR_TOKEN_FOR_TEST = 'x'.repeat(32);
    const shipped = readFileSync('config/ingress.yaml', 'utf8').replace(
      'token_file: /etc/svc-ingress/operator-token',
      'token_env: SVC_OPERATOR_TOKEN_FOR_TEST',
    );
    const config = parseConfig(shipped);
    expect(config.plugins.map((p) => p.module.name)).to.deep.equal([
      'batch-refuse',
      'size-limit',
      'auth',
      'allowlist',
      'rate-limit',
      'gate',
      'fee-rewrite',
      'local-methods',
    ]);
    expect(config.listen).to.deep.equal({ host: '127.0.0.1', port: 8545 });
    expect(config.upstreams.submit.url).to.equal('http://127.0.0.1:9651');
    expect(config.upstreams.node?.url).to.equal('http://127.0.0.1:9651');
    expect(config.upstreams.heavy).to.deep.equal({ ...config.upstreams.execution, connections: defaultHeavyConnections() });
    expect(config.metricsListen).to.deep.equal({ host: '127.0.0.1', port: 9645 });
    expect(config.maxConnectionsPerSource).to.equal(156);
    // Up to a quarter of the 128 connections' worth of short calls at once.
    expect(config.upstreams.quick).to.deep.equal({ ...config.upstreams.execution, connections: 32 });
    expect(config.upstreams.quickCall).to.deep.equal({ connections: 1, most: 32, gas: 2_000_000n, ms: 50 });
    // The shipped file bounds one call at 2 s; the default is geth's 5 s (below).
    expect(config.upstreams.maxCallMs).to.equal(2_000);
    expect(config.clientTimeouts.bodyIdleMs).to.equal(5_000);
    expect(config.maxBodyBytesInFlight).to.equal(64 * 1024 * 1024);
  });

  it('caps connections per source at a sixty-fourth of max_connections, at least 8, at most 256 and max_connections, unless set', () => {
    const read = (extra: string) => parseConfig(base('\n  - gate', extra));
    expect(read('').maxConnectionsPerSource).to.equal(156);
    expect(read('max_connections: 100000').maxConnectionsPerSource).to.equal(256);
    expect(read('max_connections: 64').maxConnectionsPerSource).to.equal(8);
    expect(read('max_connections: 2').maxConnectionsPerSource).to.equal(2);
    expect(read('max_connections: 64\nmax_connections_per_source: 64').maxConnectionsPerSource).to.equal(64);
    expect(read('').maxBodyBytesInFlight).to.equal(67_108_864);
    expect(read('max_body_bytes_in_flight: 1048576').maxBodyBytesInFlight).to.equal(1_048_576);
  });

  it('prices in the shipped example what returns logs alike, and filter creation like a log query', () => {
    const config = parseConfig(
      readFileSync('config/ingress.yaml', 'utf8').replace(
        'token_file: /etc/svc-ingress/operator-token',
        'token_env: SVC_GOOD_TOKEN_FOR_TEST',
      ),
    );
    const rateLimit = config.plugins.find((p) => p.module.name === 'rate-limit')!.options as {
      reads: { methodCosts: ReadonlyMap<string, number> };
    };
    const cost = (method: string) => rateLimit.reads.methodCosts.get(method) ?? 1;
    expect(cost('eth_getFilterLogs')).to.equal(cost('eth_getLogs'));
    for (const method of ['eth_newFilter', 'eth_newBlockFilter', 'eth_newPendingTransactionFilter'])
      expect(cost(method), method).to.equal(cost('eth_getLogs'));
    expect(cost('eth_getFilterChanges')).to.be.greaterThan(1);
  });

  it('keeps heavy_connections of the execution upstream for gas-heavy reads: half the cores, at least one, by default', () => {
    expect(defaultHeavyConnections()).to.equal(Math.max(1, Math.floor(availableParallelism() / 2)));
    const config = parseConfig(base('\n  - gate', '  heavy_connections: 3'));
    expect(config.upstreams.heavy).to.deep.equal({ ...config.upstreams.execution, connections: 3 });
  });

  it('bounds what one gas-heavy read may be expected to take at max_call_ms: 5 s (geth cuts a call there) unless set', () => {
    expect(parseConfig(base('\n  - gate', '')).upstreams.maxCallMs).to.equal(5_000);
    expect(parseConfig(base('\n  - gate', '  max_call_ms: 1000')).upstreams.maxCallMs).to.equal(1_000);
  });

  it('reads a Redis behind Sentinels: their addresses, the master name, a password from a file or the environment', () => {
    process.env.SVC_REDIS_PASSWORD_FOR_TEST = 'a-redis-password-of-32-characters';
    const config = parseConfig(
      base(
        '\n  - gate',
        'store: redis\nredis:\n  sentinels: [127.0.0.1:26379, "[::1]:26380"]\n  name: mymaster\n  password_env: SVC_REDIS_PASSWORD_FOR_TEST',
      ),
    );
    expect(config.fleet).to.deep.equal({
      store: 'redis',
      redisUrl: undefined,
      sentinel: {
        sentinels: [
          { host: '127.0.0.1', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        name: 'mymaster',
        password: 'a-redis-password-of-32-characters',
      },
    });
  });

  it('loads the devnet configuration', () => {
    process.env.SVC_OPERATOR_TOKEN = process.env.SVC_OPERATOR_TOKEN ?? 'y'.repeat(32);
    expect(parseConfig(readFileSync('config/devnet.yaml', 'utf8')).plugins).to.have.length(8);
  });

  it('accepts bare names and {name: {options}} entries, and IPv6 listen addresses', () => {
    const config = parseConfig(
      base('\n  - batch-refuse\n  - fee-rewrite:\n      base_fee_cache_ms: 0').replace('127.0.0.1:8545', '"[::1]:0"'),
    );
    expect(config.plugins.map((p) => p.module.name)).to.deep.equal(['batch-refuse', 'fee-rewrite']);
    expect(config.listen).to.deep.equal({ host: '::1', port: 0 });
  });

  it('accepts extra_methods that name a refused prefix only past their start or end, and the gated submission', () => {
    const extra = [
      'eth_getHeaderByNumber',
      'erigon_eth_sendStatus',
      'ots_debug_x',
      'ots_personal_listed',
      'eth_accountsRoot',
      'eth_sendRawTransaction',
    ];
    expect(() => parseConfig(base(`\n  - allowlist:\n      extra_methods: [${extra.join(', ')}]`))).to.not.throw();
  });

  it('switches an entry off with enabled: false without deleting it', () => {
    expect(names(base('\n  - batch-refuse\n  - allowlist:\n      enabled: false\n  - gate'))).to.deep.equal(['batch-refuse', 'gate']);
  });

  for (const [label, yaml, message] of [
    ['an unknown top-level key', base('\n  - gate', 'listne: 1'), 'listne: unknown key'],
    ['an unknown upstream key', base('\n  - gate').replace('upstreams:', 'upstreams:\n  exection: x'), 'upstreams.exection: unknown key'],
    ['an unknown plugin option', base('\n  - size-limit:\n      max_raw_tx: 5'), 'plugins[0].size-limit.max_raw_tx: unknown key'],
    [
      'a negative limit',
      base('\n  - size-limit:\n      max_raw_transaction_bytes: -1'),
      'plugins[0].size-limit.max_raw_transaction_bytes: must be a positive integer',
    ],
    [
      'a string where a number belongs',
      base('\n  - gate\n  - fee-rewrite:\n      base_fee_cache_ms: soon'),
      'plugins[1].fee-rewrite.base_fee_cache_ms: must be an integer >= 0',
    ],
    [
      'an unknown plugin',
      base('\n  - gate\n  - teleport'),
      'plugins[1]: unknown plugin "teleport" (known: batch-refuse, size-limit, auth, allowlist, rate-limit, gate, fee-rewrite, local-methods)',
    ],
    ['a plugin listed twice', base('\n  - gate\n  - gate'), 'plugins[1]: plugin "gate" is listed twice'],
    ['an entry with two names', base('\n  - {gate: null, auth: null}'), 'plugins[0]: must be a plugin name or a mapping {name: {options}}'],
    [
      'no plugin list',
      'listen: 127.0.0.1:1\nupstreams:\n  execution: http://127.0.0.1:2\n',
      'plugins: is required: the ordered list of plugins',
    ],
    [
      'a bad listen address',
      base('\n  - gate').replace('127.0.0.1:8545', 'localhost'),
      'listen: must be host:port, e.g. 127.0.0.1:8545 or [::1]:8545',
    ],
    [
      'a non-http upstream',
      base('\n  - gate').replace('http://127.0.0.1:18545', 'ftp://x'),
      'upstreams.execution: must be an http:// or https:// URL without credentials',
    ],
    [
      'an upstream with credentials',
      base('\n  - gate').replace('http://', 'http://u:p@'),
      'upstreams.execution: must be an http:// or https:// URL without credentials',
    ],
    ['a bad log level', base('\n  - gate', 'log_level: loud'), 'log_level: must be one of debug, info, warn, error'],
    [
      'an inline secret',
      base('\n  - auth:\n      token: hunter2hunter2hunter2\n  - allowlist'),
      'plugins[0].auth.token_file or plugins[0].auth.token_env: exactly one must be set',
    ],
    [
      'a missing token variable',
      base('\n  - auth:\n      token_env: SVC_NO_SUCH_VARIABLE\n  - allowlist'),
      'plugins[0].auth.token_env: environment variable SVC_NO_SUCH_VARIABLE is not set',
    ],
    [
      'an unreadable token file',
      base('\n  - auth:\n      token_file: /nonexistent/token\n  - allowlist'),
      'plugins[0].auth.token_file: cannot read /nonexistent/token (ENOENT)',
    ],
    [
      'a world-readable token file',
      base(`\n  - auth:\n      token_file: ${worldReadable}\n  - allowlist`),
      `plugins[0].auth.token_file: ${worldReadable} is open to every user (mode 644): chmod o-rwx it`,
    ],
    [
      'a token of spaces',
      base('\n  - auth:\n      token_env: SVC_BLANK_TOKEN_FOR_TEST\n  - allowlist'),
      'plugins[0].auth.token: the secret must be at least 16 printable ASCII characters, without spaces',
    ],
    [
      'a submission path around the gate in extra_methods',
      base('\n  - allowlist:\n      extra_methods: [eth_getHeaderByNumber, eth_sendRawTransactionConditional]'),
      'plugins[0].allowlist.extra_methods[1]: eth_sendRawTransactionConditional would reach the EL around the submission gate: submissions go through eth_sendRawTransaction only',
    ],
    [
      'a bundle submission in extra_methods',
      base('\n  - allowlist:\n      extra_methods: [mev_sendBundle]'),
      'plugins[0].allowlist.extra_methods[0]: mev_sendBundle would reach the EL around the submission gate: submissions go through eth_sendRawTransaction only',
    ],
    [
      'a key method in extra_methods',
      base('\n  - allowlist:\n      extra_methods: [personal_sign]'),
      'plugins[0].allowlist.extra_methods[0]: personal_sign is a signing or key method: this endpoint holds no keys and exposes none',
    ],
    ...[
      'admin_addPeer',
      'debug_traceCall',
      'engine_forkchoiceUpdatedV3',
      'miner_setExtra',
      'txpool_content',
      'anvil_setBalance',
      'hardhat_mine',
      'evm_snapshot',
      'Debug_setHead',
    ].map((method) => [
      `${method} (an EL admin namespace) in extra_methods`,
      base(`\n  - allowlist:\n      extra_methods: [eth_getHeaderByNumber, ${method}]`),
      `plugins[0].allowlist.extra_methods[1]: ${method} is in the EL's ${method.slice(0, method.indexOf('_')).toLowerCase()}_ namespace (administration, debugging or development): it is never exposed on the public endpoint`,
    ]),
    [
      'eth_accounts in extra_methods',
      base('\n  - allowlist:\n      extra_methods: [eth_accounts]'),
      'plugins[0].allowlist.extra_methods[0]: eth_accounts is a signing or key method: this endpoint holds no keys and exposes none',
    ],
    [
      'an operator method outside svc_',
      base(
        '\n  - auth:\n      token_env: SVC_GOOD_TOKEN_FOR_TEST\n      operator_methods: [svc_nodeHealth, eth_sendTransaction]\n  - allowlist',
      ),
      'plugins[0].auth.operator_methods: only svc_ methods can be operator methods, not eth_sendTransaction',
    ],
    ['duplicate YAML keys', 'listen: a\nlisten: b\n', 'config: invalid YAML: Map keys must be unique'],
    [
      'a request timeout shorter than the headers timeout',
      base('\n  - gate', 'client_timeouts:\n  headers_ms: 5000\n  request_ms: 1000'),
      'client_timeouts.request_ms: must be at least headers_ms',
    ],
    [
      'a body idle time longer than the request timeout',
      base('\n  - gate', 'client_timeouts:\n  headers_ms: 2000\n  request_ms: 3000\n  body_idle_ms: 4000'),
      'client_timeouts.body_idle_ms: must be at most request_ms',
    ],
    [
      'a burst below the rate',
      base('\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 5, burst: 2}'),
      'plugins[0].rate-limit.reads.per_source.burst: must be at least rate_per_second',
    ],
    [
      'a method cost no source bucket holds',
      base('\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 2, burst: 4}\n        method_costs: {eth_getLogs: 5}'),
      'plugins[0].rate-limit.reads.method_costs.eth_getLogs: costs more than per_source.burst (4): it could never pass',
    ],
    [
      'a method cost the host bucket cannot hold',
      base(
        '\n  - rate-limit:\n      reads:\n        per_source: {rate_per_second: 10, burst: 10}\n        host: {rate_per_second: 3, burst: 3}\n        method_costs: {eth_getLogs: 5}',
      ),
      'plugins[0].rate-limit.reads.method_costs.eth_getLogs: costs more than host.burst (3): it could never pass',
    ],
    ['a zero connection cap', base('\n  - gate', 'max_connections: 0'), 'max_connections: must be a positive integer'],
    ['no heavy connection', base('\n  - gate', '  heavy_connections: 0'), 'upstreams.heavy_connections: must be a positive integer'],
    ['a call bound under 100 ms', base('\n  - gate', '  max_call_ms: 99'), 'upstreams.max_call_ms: must be an integer >= 100'],
    [
      'more heavy connections than connections',
      base('\n  - gate', '  connections: 4\n  heavy_connections: 5'),
      'upstreams.heavy_connections: must be at most 4',
    ],
    [
      'more connections per source than in all',
      base('\n  - gate', 'max_connections: 64\nmax_connections_per_source: 65'),
      'max_connections_per_source: must be at most 64',
    ],
    [
      'a body budget smaller than the largest body',
      base('\n  - gate', 'max_body_bytes_in_flight: 1048575'),
      'max_body_bytes_in_flight: must be an integer >= 1048576',
    ],
    [
      'store: redis without a URL',
      base('\n  - gate', 'store: redis'),
      'redis_url: is required with store: redis (or redis: with sentinels)',
    ],
    [
      'both a Redis URL and Sentinels',
      base('\n  - gate', 'store: redis\nredis_url: redis://127.0.0.1:6379\nredis:\n  sentinels: [127.0.0.1:26379]\n  name: m'),
      'redis: set redis_url or redis (Sentinel), not both',
    ],
    [
      'Sentinels without a master name',
      base('\n  - gate', 'store: redis\nredis:\n  sentinels: [127.0.0.1:26379]'),
      'redis.name: is required',
    ],
    [
      'a Sentinel address without a port',
      base('\n  - gate', 'store: redis\nredis:\n  sentinels: [127.0.0.1]\n  name: m'),
      'redis.sentinels: 127.0.0.1 is not host:port',
    ],
    [
      'no Sentinel at all',
      base('\n  - gate', 'store: redis\nredis:\n  sentinels: []\n  name: m'),
      'redis.sentinels: must list at least one Sentinel, host:port',
    ],
    [
      'an unknown key under redis',
      base('\n  - gate', 'store: redis\nredis:\n  sentinels: [127.0.0.1:26379]\n  name: m\n  password: inline'),
      'redis.password: unknown key',
    ],
    [
      'a Redis URL with inline credentials',
      base('\n  - gate', 'store: redis\nredis_url: redis://user:secret@127.0.0.1:6379'),
      'redis_url: carries credentials: put it in redis_url_file or redis_url_env',
    ],
    [
      'local-methods before allowlist',
      base('\n  - local-methods\n  - allowlist'),
      'plugins: allowlist must come before local-methods (list order is execution order)',
    ],
    [
      'client_version beside pass_client_version',
      base('\n  - allowlist:\n      pass_client_version: true\n      client_version: x'),
      'plugins[0].allowlist.client_version: cannot be set with pass_client_version: true (the EL answers web3_clientVersion then)',
    ],
    [
      'an allowlisted signing method',
      base('\n  - allowlist:\n      extra_methods: [eth_sign]'),
      'plugins[0].allowlist.extra_methods[0]: eth_sign cannot be allowlisted',
    ],
    [
      'no token guesses at all',
      base('\n  - auth:\n      token_env: SVC_GOOD_TOKEN_FOR_TEST\n      guesses_per_minute: 0\n  - allowlist'),
      'plugins[0].auth.guesses_per_minute: must be a positive integer',
    ],
    [
      'svc_validateTransaction in extra_methods',
      base('\n  - allowlist:\n      extra_methods: [svc_validateTransaction]'),
      'plugins[0].allowlist.extra_methods[0]: svc_validateTransaction cannot be allowlisted',
    ],
  ] as const) {
    it(`refuses ${label}, naming the YAML path`, () => {
      expect(() => parseConfig(yaml)).to.throw(message);
    });
  }

  it('reports an invalid secret without echoing it', () => {
    process.env.SVC_SHORT_TOKEN = 'short-secret';
    let message = '';
    try {
      parseConfig(base('\n  - auth:\n      token_env: SVC_SHORT_TOKEN'));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.equal('plugins[0].auth.token: the secret must be at least 16 printable ASCII characters, without spaces');
  });

  describe('order rules', () => {
    for (const [plugins, message] of [
      ['\n  - allowlist\n  - batch-refuse', 'plugins: batch-refuse must come before allowlist (list order is execution order)'],
      ['\n  - gate\n  - size-limit', 'plugins: size-limit must come before gate (list order is execution order)'],
      [
        '\n  - allowlist\n  - auth:\n      token_env: SVC_OPERATOR_TOKEN_FOR_TEST',
        'plugins: auth must come before allowlist (list order is execution order)',
      ],
      ['\n  - gate\n  - allowlist', 'plugins: allowlist must come before gate (list order is execution order)'],
    ] as const) {
      it(`refuses ${plugins
        .replace(/\s+-\s+/g, ' ')
        .split('\n')[0]!
        .trim()} out of order`, () => {
        process.env.SVC_OPERATOR_TOKEN_FOR_TEST = 'x'.repeat(32);
        expect(() => parseConfig(base(plugins))).to.throw(message);
      });
    }

    it('checks order only among enabled entries', () => {
      expect(names(base('\n  - gate\n  - allowlist:\n      enabled: false'))).to.deep.equal(['gate']);
    });
  });
});
