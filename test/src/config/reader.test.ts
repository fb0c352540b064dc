import { expect } from 'chai';
import { ConfigError, OptionsReader } from '../../../src/config/reader.js';

/** Where load.ts puts one plugin's options: `plugins[i].<name>`. */
const PATH = 'plugins[2].demo';
const reader = (raw: unknown) => OptionsReader.of(PATH, raw);

/** What `read` threw, as the operator sees it: the class and the exact message. */
function complaint(read: () => unknown): { name: string; message: string } | 'no complaint' {
  try {
    read();
  } catch (err) {
    expect(err, 'a ConfigError').to.be.instanceOf(ConfigError);
    return { name: (err as Error).name, message: (err as Error).message };
  }
  return 'no complaint';
}
const configError = (message: string) => ({ name: 'ConfigError', message });

describe('config: OptionsReader', () => {
  describe('of', () => {
    it('reads null and absent options as an empty mapping', () => {
      for (const raw of [null, undefined]) {
        const options = reader(raw);
        expect(options.keys()).to.deep.equal([]);
        expect(options.integer('n', 7)).to.equal(7);
        expect(complaint(() => options.done())).to.equal('no complaint');
      }
    });

    for (const [label, raw] of [
      ['a string', 'fast'],
      ['a number', 5],
      ['a boolean', true],
      ['a list', [1, 2]],
    ] as const) {
      it(`refuses ${label} where a mapping belongs, naming the path`, () => {
        expect(complaint(() => reader(raw))).to.deep.equal(configError(`${PATH}: must be a mapping`));
      });
    }
  });

  describe('fail', () => {
    it('throws a ConfigError naming path.key and the reason', () => {
      expect(complaint(() => reader({}).fail('role', 'must be validator or follower'))).to.deep.equal(
        configError(`${PATH}.role: must be validator or follower`),
      );
    });

    it('names the bare key under the root reader (empty path)', () => {
      expect(complaint(() => OptionsReader.of('', {}).fail('listen', 'is wrong'))).to.deep.equal(configError('listen: is wrong'));
    });
  });

  describe('has', () => {
    it('is true for any present value, false for an absent or null one', () => {
      const options = reader({ zero: 0, no: false, empty: '', nothing: null });
      expect(['zero', 'no', 'empty', 'nothing', 'absent'].map((key) => options.has(key))).to.deep.equal([true, true, true, false, false]);
    });

    it('does not count as reading the key: done() still refuses it', () => {
      const options = reader({ relay_url: 'http://127.0.0.1:1' });
      expect(options.has('relay_url')).to.equal(true);
      expect(complaint(() => options.done())).to.deep.equal(configError(`${PATH}.relay_url: unknown key`));
    });
  });

  describe('string', () => {
    it('returns the value when present, the fallback when absent or null', () => {
      const options = reader({ role: 'follower', nothing: null });
      expect([
        options.string('role', 'validator'),
        options.string('absent', 'validator'),
        options.string('nothing', 'validator'),
      ]).to.deep.equal(['follower', 'validator', 'validator']);
    });

    it('refuses an absent key without a fallback with "is required"', () => {
      expect(complaint(() => reader({}).string('listen'))).to.deep.equal(configError(`${PATH}.listen: is required`));
      expect(complaint(() => reader({ listen: null }).string('listen'))).to.deep.equal(configError(`${PATH}.listen: is required`));
    });

    for (const [label, value] of [
      ['an empty string', ''],
      ['a number', 8545],
      ['a boolean', true],
      ['a list', ['a']],
      ['a mapping', { a: 1 }],
    ] as const) {
      it(`refuses ${label} with "must be a non-empty string"`, () => {
        expect(complaint(() => reader({ role: value }).string('role', 'validator'))).to.deep.equal(
          configError(`${PATH}.role: must be a non-empty string`),
        );
      });
    }
  });

  describe('optionalString', () => {
    it('returns the value when present, undefined when absent or null, and counts the key as read', () => {
      const options = reader({ method: 'svc_validateTransaction', nothing: null });
      expect([options.optionalString('method'), options.optionalString('nothing'), options.optionalString('absent')]).to.deep.equal([
        'svc_validateTransaction',
        undefined,
        undefined,
      ]);
      expect(complaint(() => options.done())).to.equal('no complaint');
    });

    for (const [label, value] of [
      ['an empty string', ''],
      ['a number', 1],
    ] as const) {
      it(`refuses ${label} with "must be a non-empty string"`, () => {
        expect(complaint(() => reader({ method: value }).optionalString('method'))).to.deep.equal(
          configError(`${PATH}.method: must be a non-empty string`),
        );
      });
    }
  });

  describe('httpUrl', () => {
    const URL_RULE = 'must be an http:// or https:// URL without credentials';

    it('returns an http or https URL exactly as written, path and query included', () => {
      const options = reader({ a: 'http://127.0.0.1:18545', b: 'https://rpc.example.org/v1/?key=x' });
      expect([options.httpUrl('a'), options.httpUrl('b')]).to.deep.equal(['http://127.0.0.1:18545', 'https://rpc.example.org/v1/?key=x']);
    });

    it('returns the fallback when absent, and refuses an absent key without one with "is required"', () => {
      expect(reader({}).httpUrl('submit', 'http://127.0.0.1:9651')).to.equal('http://127.0.0.1:9651');
      expect(complaint(() => reader({}).httpUrl('submit'))).to.deep.equal(configError(`${PATH}.submit: is required`));
    });

    it('checks the fallback as it checks a value', () => {
      expect(complaint(() => reader({}).httpUrl('submit', 'ws://127.0.0.1:1'))).to.deep.equal(configError(`${PATH}.submit: ${URL_RULE}`));
    });

    for (const [label, value] of [
      ['a URL that does not parse', 'http://'],
      ['a bare host:port', '127.0.0.1:8545'],
      ['a WebSocket URL', 'ws://127.0.0.1:8546'],
      ['a user name without a password', 'https://operator@rpc.example.org'],
      ['a password without a user name', 'https://:hunter2@rpc.example.org'],
    ] as const) {
      it(`refuses ${label}`, () => {
        expect(complaint(() => reader({ relay_url: value }).httpUrl('relay_url'))).to.deep.equal(
          configError(`${PATH}.relay_url: ${URL_RULE}`),
        );
      });
    }

    it('refuses a non-string with the string rule first', () => {
      expect(complaint(() => reader({ relay_url: 8545 }).httpUrl('relay_url'))).to.deep.equal(
        configError(`${PATH}.relay_url: must be a non-empty string`),
      );
    });
  });

  describe('integer', () => {
    it('returns the value when present, the fallback when absent or null', () => {
      const options = reader({ n: 3, nothing: null });
      expect([options.integer('n', 9), options.integer('absent', 9), options.integer('nothing', 9)]).to.deep.equal([3, 9, 9]);
    });

    for (const [label, value] of [
      ['zero', 0],
      ['a negative number', -5],
      ['a fraction', 1.5],
      ['a numeric string', '5'],
      ['a boolean', true],
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['an integer past 2^53', 2 ** 53],
    ] as const) {
      it(`refuses ${label} with the default minimum 1 as "must be a positive integer"`, () => {
        expect(complaint(() => reader({ n: value }).integer('n', 1))).to.deep.equal(configError(`${PATH}.n: must be a positive integer`));
      });
    }

    it('takes the largest safe integer', () => {
      expect(reader({ n: Number.MAX_SAFE_INTEGER }).integer('n', 1)).to.equal(Number.MAX_SAFE_INTEGER);
    });

    it('with min 0 takes zero and refuses -1 with "must be an integer >= 0"', () => {
      expect(reader({ n: 0 }).integer('n', 5, { min: 0 })).to.equal(0);
      expect(complaint(() => reader({ n: -1 }).integer('n', 5, { min: 0 }))).to.deep.equal(
        configError(`${PATH}.n: must be an integer >= 0`),
      );
    });

    it('with another min takes the min itself and names it below', () => {
      expect(reader({ n: 32 }).integer('n', 48, { min: 32, max: 64 })).to.equal(32);
      expect(complaint(() => reader({ n: 31 }).integer('n', 48, { min: 32, max: 64 }))).to.deep.equal(
        configError(`${PATH}.n: must be an integer >= 32`),
      );
    });

    it('with an explicit min 1 says "must be a positive integer"', () => {
      expect(complaint(() => reader({ n: 0 }).integer('n', 5, { min: 1 }))).to.deep.equal(
        configError(`${PATH}.n: must be a positive integer`),
      );
    });

    it('with a max takes the max itself and refuses one more with "must be at most"', () => {
      expect(reader({ n: 5_000 }).integer('n', 100, { min: 0, max: 5_000 })).to.equal(5_000);
      expect(complaint(() => reader({ n: 5_001 }).integer('n', 100, { min: 0, max: 5_000 }))).to.deep.equal(
        configError(`${PATH}.n: must be at most 5000`),
      );
    });

    it('names the type rule, not the max, for a wrong type under a max', () => {
      expect(complaint(() => reader({ n: 'many' }).integer('n', 1, { max: 4 }))).to.deep.equal(
        configError(`${PATH}.n: must be a positive integer`),
      );
    });

    // rate-limit relies on this: `rate_per_second` has fallback 0, so leaving it out is refused.
    it('checks the fallback as it checks a value', () => {
      expect(complaint(() => reader({}).integer('rate_per_second', 0))).to.deep.equal(
        configError(`${PATH}.rate_per_second: must be a positive integer`),
      );
    });
  });

  describe('boolean', () => {
    it('returns the value when present, false included, the fallback when absent or null', () => {
      const options = reader({ off: false, on: true, nothing: null });
      expect([
        options.boolean('off', true),
        options.boolean('on', false),
        options.boolean('absent', true),
        options.boolean('nothing', false),
      ]).to.deep.equal([false, true, true, false]);
    });

    for (const [label, value] of [
      ['the string "true"', 'true'],
      ['the string "yes"', 'yes'],
      ['0', 0],
      ['1', 1],
    ] as const) {
      it(`refuses ${label} with "must be true or false"`, () => {
        expect(complaint(() => reader({ enabled: value }).boolean('enabled', true))).to.deep.equal(
          configError(`${PATH}.enabled: must be true or false`),
        );
      });
    }
  });

  describe('stringList', () => {
    it('returns the list when present, the fallback when absent, each frozen and a copy', () => {
      const listed = ['10.0.0.0/8', '::1'];
      const fallback = ['*'];
      const options = reader({ trusted_proxies: listed });
      const read = options.stringList('trusted_proxies', []);
      const defaulted = options.stringList('allowed_origins', fallback);
      expect([read, defaulted]).to.deep.equal([['10.0.0.0/8', '::1'], ['*']]);
      expect([Object.isFrozen(read), Object.isFrozen(defaulted)]).to.deep.equal([true, true]);
      listed.push('192.168.0.0/16');
      fallback.push('https://app.example.org');
      expect([read, defaulted]).to.deep.equal([['10.0.0.0/8', '::1'], ['*']]);
    });

    it('reads null as absent', () => {
      expect(reader({ trusted_proxies: null }).stringList('trusted_proxies', ['x'])).to.deep.equal(['x']);
    });

    for (const [label, value] of [
      ['a string', '10.0.0.0/8'],
      ['a mapping', { a: 'b' }],
      ['a number', 1],
    ] as const) {
      it(`refuses ${label} with "must be a list of strings"`, () => {
        expect(complaint(() => reader({ trusted_proxies: value }).stringList('trusted_proxies', []))).to.deep.equal(
          configError(`${PATH}.trusted_proxies: must be a list of strings`),
        );
      });
    }

    for (const [label, item] of [
      ['an empty string', ''],
      ['a number', 10],
      ['null', null],
      ['a list', ['a']],
    ] as const) {
      it(`refuses ${label} among the items, naming its index`, () => {
        expect(
          complaint(() => reader({ extra_methods: ['eth_chainId', 'net_version', item] }).stringList('extra_methods', [])),
        ).to.deep.equal(configError(`${PATH}.extra_methods[2]: must be a non-empty string`));
      });
    }
  });

  describe('rawList', () => {
    it('returns the items unread, an empty list when absent or null', () => {
      const items = ['gate', { 'rate-limit': null }];
      expect(reader({ plugins: items }).rawList('plugins')).to.deep.equal(['gate', { 'rate-limit': null }]);
      expect([reader({}).rawList('plugins'), reader({ plugins: null }).rawList('plugins')]).to.deep.equal([[], []]);
    });

    it('refuses a non-list with "must be a list"', () => {
      expect(complaint(() => reader({ plugins: 'gate' }).rawList('plugins'))).to.deep.equal(configError(`${PATH}.plugins: must be a list`));
    });
  });

  describe('child', () => {
    it('reads a nested mapping under path.key, and its complaints name the whole path', () => {
      const perSource = reader({ reads: { per_source: { rate_per_second: 0 } } })
        .child('reads')
        .child('per_source');
      expect(perSource.path).to.equal(`${PATH}.reads.per_source`);
      expect(complaint(() => perSource.integer('rate_per_second', 1))).to.deep.equal(
        configError(`${PATH}.reads.per_source.rate_per_second: must be a positive integer`),
      );
    });

    it('reads an absent or null child as empty, and counts it as read in the parent', () => {
      const options = reader({ host: null });
      expect([options.child('host').keys(), options.child('absent').keys()]).to.deep.equal([[], []]);
      expect(complaint(() => options.done())).to.equal('no complaint');
    });

    it('refuses a scalar or a list where the child mapping belongs', () => {
      expect(complaint(() => reader({ host: 5 }).child('host'))).to.deep.equal(configError(`${PATH}.host: must be a mapping`));
      expect(complaint(() => reader({ host: [] }).child('host'))).to.deep.equal(configError(`${PATH}.host: must be a mapping`));
    });

    it('refuses unknown keys of the child in its own done(), with the whole path', () => {
      const child = reader({ per_source: { rate_per_second: 1, brust: 2 } }).child('per_source');
      child.integer('rate_per_second', 1);
      expect(complaint(() => child.done())).to.deep.equal(configError(`${PATH}.per_source.brust: unknown key`));
    });
  });

  describe('keys', () => {
    it('lists every key present, null-valued ones included, without reading them', () => {
      const options = reader({ eth_getLogs: 20, eth_call: null });
      expect(options.keys()).to.deep.equal(['eth_getLogs', 'eth_call']);
      expect(complaint(() => options.done())).to.deep.equal(configError(`${PATH}.eth_getLogs: unknown key`));
    });
  });

  describe('done', () => {
    it('passes once every key was read, whichever getter read it', () => {
      const options = reader({ s: 'x', u: 'http://127.0.0.1:1', o: 'y', i: 1, b: true, l: ['a'], r: [], c: {} });
      options.string('s');
      options.httpUrl('u');
      options.optionalString('o');
      options.integer('i', 1);
      options.boolean('b', false);
      options.stringList('l', []);
      options.rawList('r');
      options.child('c');
      expect(complaint(() => options.done())).to.equal('no complaint');
    });

    it('refuses the first key nobody read, with "unknown key"', () => {
      const options = reader({ role: 'validator', rol: 'follower', chian_id: 1 });
      options.string('role');
      expect(complaint(() => options.done())).to.deep.equal(configError(`${PATH}.rol: unknown key`));
    });

    it('refuses an unknown key even when its value is null', () => {
      const options = reader({ relay_ulr: null });
      expect(complaint(() => options.done())).to.deep.equal(configError(`${PATH}.relay_ulr: unknown key`));
    });

    it('is not satisfied by reads of absent keys: a present key nobody read is still refused', () => {
      const options = reader({ n: 2 });
      options.integer('absent', 1);
      expect(complaint(() => options.done())).to.deep.equal(configError(`${PATH}.n: unknown key`));
    });
  });
});
