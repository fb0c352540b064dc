import { expect } from 'chai';
import { canonicalBody, readRequest } from '../../src/jsonrpc.js';

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
      ['objects', (levels) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1)],
      ['objects and arrays in turn', (levels) => {
        let text = levels % 2 === 1 ? '{}' : '[]';
        for (let level = levels - 1; level >= 1; level--) text = level % 2 === 1 ? `{"a":${text}}` : `[${text}]`;
        return text;
      }],
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

    it('refuses deep objects behind a shallow first member', () => {
      const params = '{"blockNumber":"0x0","overrides":' + '{"a":'.repeat(63) + '{}' + '}'.repeat(63) + '}';
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
      ['a 32-character name with quotes and backslashes as sent', String.raw`"quoted" \ back\slash 0123456789`,
        String.raw`"quoted" \ back\slash 0123456789`],
      ['a 33-character name with quotes and backslashes escaped, then cut to 32', String.raw`"quoted" \ back\slash 0123456789a`,
        String.raw`\"quoted\" \\ back\\slash 012345`],
      ['a short name with a control character escaped', 'a\u0001b', 'a\\u0001b'],
      ['a short name with a newline and a tab escaped', 'x\ny\t', 'x\\ny\\t'],
      ['a short name with a lone surrogate escaped', 'k\ud800', 'k\\ud800'],
      ['a short name outside ASCII', 'm\u00e9thod', 'm\u00e9thod'],
      ['a name whose escaped form is exactly 32 characters whole', 'a'.repeat(20) + '\u0001\u0002', 'a'.repeat(20) + '\\u0001\\u0002'],
      ['a long name with a control character escaped, then cut to 32', '\u0000' + 'a'.repeat(40), '\\u0000' + 'a'.repeat(26)],
    ] as const) {
      it(`shows ${label}`, () => {
        expect(refusal(name)).to.deep.equal(naming(shown));
      });
    }
  });
});
