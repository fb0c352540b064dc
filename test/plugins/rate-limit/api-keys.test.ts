import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { presentedKey, readApiKeys } from '../../../plugins/rate-limit/api-keys.js';
import { readBucket } from '../../../plugins/rate-limit/options.js';
import { OptionsReader } from '../../../src/plugin.js';
import { scratchDir } from '../../../support/scratch.js';

const KEY = 'k3y-for-partner-a-0123456789';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const read = (options: Record<string, unknown>) => readApiKeys(OptionsReader.of('plugins[4].rate-limit', options), readBucket);

describe('rate-limit: API keys (api-keys.ts)', () => {
  describe('reading them', () => {
    it('keys each entry by its SHA-256, with its own buckets where it names them', () => {
      const keys = read({ api_keys: [{ name: 'partner-a', sha256: sha256(KEY), reads: { rate_per_second: 2000, burst: 4000 } }] });
      expect([...keys.entries()]).to.deep.equal([
        [sha256(KEY), { name: 'partner-a', reads: { ratePerSecond: 2000, burst: 4000 }, submissions: undefined }],
      ]);
    });

    it('reads api_keys_file as the same list, beside the inline ones', () => {
      const file = join(scratchDir('svc-keys'), 'keys.yaml');
      writeFileSync(file, `- name: from-file\n  sha256: ${sha256('another-key-0123456789')}\n`);
      const keys = read({ api_keys: [{ name: 'inline', sha256: sha256(KEY) }], api_keys_file: file });
      expect([...keys.values()].map((key) => key.name)).to.deep.equal(['inline', 'from-file']);
    });

    for (const [label, options, message] of [
      [
        'a name with capitals',
        { api_keys: [{ name: 'Partner', sha256: sha256(KEY) }] },
        'plugins[4].rate-limit.api_keys[0].name: must be 1-32',
      ],
      ['a key in clear', { api_keys: [{ name: 'a', sha256: KEY }] }, "plugins[4].rate-limit.api_keys[0].sha256: must be the key's SHA-256"],
      [
        'a name twice',
        {
          api_keys: [
            { name: 'a', sha256: sha256(KEY) },
            { name: 'a', sha256: sha256('x') },
          ],
        },
        'plugins[4].rate-limit.api_keys[1].name: "a" is named twice',
      ],
      [
        'one key twice',
        {
          api_keys: [
            { name: 'a', sha256: sha256(KEY) },
            { name: 'b', sha256: sha256(KEY) },
          ],
        },
        'plugins[4].rate-limit.api_keys[1].sha256: is the same key as another entry',
      ],
      [
        'an unknown field',
        { api_keys: [{ name: 'a', sha256: sha256(KEY), quota: 1 }] },
        'plugins[4].rate-limit.api_keys[0].quota: unknown key',
      ],
      [
        'a file that is not there',
        { api_keys_file: '/nonexistent/keys.yaml' },
        'plugins[4].rate-limit.api_keys_file: cannot be read: ENOENT',
      ],
    ] as const) {
      it(`refuses ${label}, naming where`, () => {
        expect(() => read(options)).to.throw(message);
      });
    }
  });

  describe('what a request presents', () => {
    const keys = read({ api_keys: [{ name: 'partner-a', sha256: sha256(KEY) }] });

    it("finds a key as a bearer token or as the path's last segment", () => {
      expect(presentedKey(keys, { authorization: `Bearer ${KEY}` }, '/', false)).to.have.property('name', 'partner-a');
      expect(presentedKey(keys, {}, `/${KEY}`, false)).to.have.property('name', 'partner-a');
      expect(presentedKey(keys, {}, `/v1/${KEY}?x=1`, false)).to.have.property('name', 'partner-a');
    });

    it('answers "unknown" for a key not configured, nothing for no key or a short path', () => {
      expect(presentedKey(keys, { authorization: 'Bearer nope' }, '/', false)).to.equal('unknown');
      expect(presentedKey(keys, {}, '/0123456789abcdefXYZ', false)).to.equal('unknown');
      expect(presentedKey(keys, {}, '/', false)).to.equal(undefined);
      expect(presentedKey(keys, {}, '/rpc', false)).to.equal(undefined);
      expect(presentedKey(keys, {}, undefined, false)).to.equal(undefined);
    });

    it("leaves the operator's bearer token to auth", () => {
      expect(presentedKey(keys, { authorization: 'Bearer operator-token' }, '/', true)).to.equal(undefined);
    });
  });
});
