import { expect } from 'chai';
import { canonicalBody, formatResponse, idOf, isJsonContentType, isValidId, readRequest } from '../../src/jsonrpc.js';

const refused = (id: unknown, why: string) => ({ ok: false, id, error: { code: -32600, message: `invalid request: ${why}` } });

describe('jsonrpc: reading one request', () => {
  describe('params nesting (at most 64 levels)', () => {
    const TOO_DEEP = '"params" is nested deeper than 64 levels';
    const body = (params: string) => `{"jsonrpc":"2.0","id":7,"method":"eth_call","params":${params}}`;
    // Read from text, as the server reads a body.
    const read = (params: string) => readRequest(JSON.parse(body(params)));

    // Each builds `levels` nested containers (the params value itself is level 1), the innermost empty.
    const shapes: ReadonlyArray<readonly [string, (levels: number) => string]> = [
      ['arrays', (levels) => '['.repeat(levels) + ']'.repeat(levels)],
      ['objects', (levels) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`],
      [
        'objects and arrays in turn',
        (levels) => {
          let text = levels % 2 === 1 ? '{}' : '[]';
          for (let level = levels - 1; level >= 1; level--) text = level % 2 === 1 ? `{"a":${text}}` : `[${text}]`;
          return text;
        },
      ],
    ];

    for (const [label, nested] of shapes) {
      it(`accepts ${label} nested exactly 64 levels and forwards them unchanged`, () => {
        const params = nested(64);
        const result = read(params);
        expect(result.ok && canonicalBody(result.request)).to.equal(body(params));
      });

      it(`refuses ${label} nested 65 levels with -32600, echoing the id`, () => {
        expect(read(nested(65))).to.deep.equal(refused(7, TOO_DEEP));
      });

      // Serialising this for the EL would overflow the stack if the reader let it through.
      it(`refuses ${label} nested 100,000 levels cleanly`, () => {
        expect(read(nested(100_000))).to.deep.equal(refused(7, TOO_DEEP));
      });
    }

    it('counts only containers as levels: null, booleans, numbers and strings at the 64th level are taken', () => {
      const params = `${'['.repeat(63)}[null,true,1,"x"]${']'.repeat(63)}`;
      const result = read(params);
      expect(result.ok && canonicalBody(result.request)).to.equal(body(params));
    });

    it('refuses deep objects behind a shallow first member', () => {
      const params = `{"blockNumber":"0x0","overrides":${'{"a":'.repeat(63)}{}${'}'.repeat(63)}}`;
      expect(read(params)).to.deep.equal(refused(7, TOO_DEEP));
    });
  });

  describe('the "unexpected member" refusal names the member', () => {
    const refusal = (name: string) => readRequest({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', [name]: true });
    const naming = (shown: string) => refused(1, `unexpected member "${shown}"`);

    for (const [label, name, shown] of [
      ['a plain name', 'METHOD', 'METHOD'],
      ['a 31-character name whole', 'abcdefghijklmnopqrstuvwxyz01234', 'abcdefghijklmnopqrstuvwxyz01234'],
      ['a 32-character name whole', 'abcdefghijklmnopqrstuvwxyz012345', 'abcdefghijklmnopqrstuvwxyz012345'],
      ['a 33-character name cut to its first 32', 'abcdefghijklmnopqrstuvwxyz0123456', 'abcdefghijklmnopqrstuvwxyz012345'],
      ['a 10,000-character name cut to its first 32', 'x'.repeat(10_000), 'x'.repeat(32)],
      // Short printable names are shown as sent; past 32 characters the name is JSON-escaped, then cut.
      [
        'a 32-character name with quotes and backslashes as sent',
        String.raw`"quoted" \ back\slash 0123456789`,
        String.raw`"quoted" \ back\slash 0123456789`,
      ],
      [
        'a 33-character name with quotes and backslashes escaped, then cut to 32',
        String.raw`"quoted" \ back\slash 0123456789a`,
        String.raw`\"quoted\" \\ back\\slash 012345`,
      ],
      ['a short name with a control character escaped', 'a\u0001b', 'a\\u0001b'],
      ['a short name with a newline and a tab escaped', 'x\ny\t', 'x\\ny\\t'],
      ['a short name with a lone surrogate escaped', 'k\ud800', 'k\\ud800'],
      ['a short name outside ASCII', 'm\u00e9thod', 'm\u00e9thod'],
      ['a name whose escaped form is exactly 32 characters whole', `${'a'.repeat(20)}\u0001\u0002`, `${'a'.repeat(20)}\\u0001\\u0002`],
      ['a long name with a control character escaped, then cut to 32', `\u0000${'a'.repeat(40)}`, `\\u0000${'a'.repeat(26)}`],
    ] as const) {
      it(`shows ${label}`, () => {
        expect(refusal(name)).to.deep.equal(naming(shown));
      });
    }
  });

  describe('the envelope', () => {
    const request = (members: Record<string, unknown>) => readRequest({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', ...members });

    it('refuses what is not one request object: null, a string, a number, an array', () => {
      for (const message of [null, 'x', 5, []]) {
        expect(readRequest(message), JSON.stringify(message)).to.deep.equal(refused(null, 'the body must be one JSON-RPC request object'));
      }
    });

    it('keeps a request without params without a params member, and reads params null as []', () => {
      const bare = readRequest({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' });
      expect(bare).to.deep.equal({ ok: true, request: { jsonrpc: '2.0', id: 1, method: 'eth_chainId' } });
      expect(request({ params: null })).to.deep.equal({ ok: true, request: { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] } });
    });

    it('refuses params that are neither an array nor an object', () => {
      for (const params of ['x', 5, true]) {
        expect(request({ params }), String(params)).to.deep.equal(refused(1, '"params" must be an array or an object'));
      }
    });

    it('takes a method name of 128 characters and refuses one of 129', () => {
      expect(request({ method: 'a'.repeat(128) }).ok).to.equal(true);
      expect(request({ method: 'a'.repeat(129) })).to.deep.equal(refused(1, '"method" is not a valid method name'));
    });

    it('echoes ids it can carry exactly, and only those', () => {
      for (const id of [null, 'x', 0, -7, 2 ** 53 - 1]) expect(isValidId(id), String(id)).to.equal(true);
      for (const id of [2 ** 53, 1.5, true, {}, [], undefined]) expect(isValidId(id), String(id)).to.equal(false);
      expect([idOf(null), idOf('x'), idOf([{ id: 3 }]), idOf({ id: 3 }), idOf({ id: 1.5 })]).to.deep.equal([null, null, null, 3, null]);
    });
  });

  describe('params the EL would read otherwise', () => {
    const INEXACT = '"params" holds a number JSON cannot carry exactly (beyond ±2^53, or out of range): send it as a hex string';
    const UNICODE = '"params" holds a string with a lone UTF-16 surrogate';
    const read = (params: string) => readRequest(JSON.parse(`{"jsonrpc":"2.0","id":2,"method":"eth_call","params":${params}}`));

    for (const [label, params, why] of [
      ['a number out of range (1e400)', '[1e400]', INEXACT],
      ['an integer beyond 2^53', '[9007199254740993]', INEXACT],
      ['an inexact number after an exact one', '[1, 9007199254740993]', INEXACT],
      ['an inexact number in an object', '{"a":{"b":-9007199254740993}}', INEXACT],
      ['a lone surrogate after a good string', '["ok", "\\ud800"]', UNICODE],
      ['a lone surrogate in a key', '[{"\\udc00":1}]', UNICODE],
      ['a lone surrogate in a nested value', '{"a":["\\udc00"]}', UNICODE],
    ] as const) {
      it(`refuses ${label}`, () => {
        expect(read(params)).to.deep.equal(refused(2, why));
      });
    }

    it('takes fractions, integers within 2^53, booleans, null and paired surrogates, and freezes what it read', () => {
      const result = read('[1.5, 9007199254740991, -9007199254740991, true, null, "\\ud83d\\ude00", {"k":[0]}]');
      if (!result.ok) throw new Error(result.error.message);
      const params = result.request.params as unknown[];
      expect(Object.isFrozen(params) && Object.isFrozen(params[6]) && Object.isFrozen((params[6] as { k: unknown }).k)).to.equal(true);
    });
  });

  describe('content types and answers', () => {
    it('takes the JSON-RPC media types with parameters, and nothing that merely contains one', () => {
      for (const type of [
        'application/json',
        'Application/JSON; charset=utf-8',
        'application/json ; charset=utf-8',
        'application/json-rpc',
        'application/jsonrequest',
      ]) {
        expect(isJsonContentType(type), type).to.equal(true);
      }
      for (const type of [
        undefined,
        'text/plain; x=application/json',
        'application/jsonx',
        'application/json-rpcx',
        'application/x-json',
      ]) {
        expect(isJsonContentType(type), String(type)).to.equal(false);
      }
    });

    it('writes results and errors, with data only when there is some', () => {
      expect(formatResponse(1, { result: 5 })).to.equal('{"jsonrpc":"2.0","id":1,"result":5}');
      expect(formatResponse('a', { result: null })).to.equal('{"jsonrpc":"2.0","id":"a","result":null}');
      expect(formatResponse(null, { error: { code: -32600, message: 'm' } })).to.equal(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}',
      );
      expect(formatResponse(2, { error: { code: 3, message: 'r', data: '0x' } })).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":3,"message":"r","data":"0x"}}',
      );
    });
  });
});
