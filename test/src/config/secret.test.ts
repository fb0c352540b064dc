import { expect } from 'chai';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, OptionsReader } from '../../../src/config/reader.js';
import { readSecret } from '../../../src/config/secret.js';

const AT = 'plugins[0].auth';
const TOKEN = 'a-token-of-24-characters';
const ENV = 'SVC_SECRET_TEST_TOKEN';

describe('config/secret: reading a secret from a file or the environment', () => {
  let dir: string;
  let count = 0;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-ingress-secret-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    delete process.env[ENV];
  });

  /** A file holding `content` with exactly `mode` (chmod, so the umask cannot narrow it). */
  const fileWith = (content: string, mode = 0o600) => {
    const path = join(dir, `token-${count++}`);
    writeFileSync(path, content);
    chmodSync(path, mode);
    return path;
  };
  const read = (raw: Record<string, unknown>) => readSecret(OptionsReader.of(AT, raw), 'token');
  const failure = (raw: Record<string, unknown>): string => {
    try {
      read(raw);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('no ConfigError');
  };

  describe('from a file', () => {
    it('reads it with one trailing newline trimmed, LF or CRLF', () => {
      expect(read({ token_file: fileWith(TOKEN) })).to.equal(TOKEN);
      expect(read({ token_file: fileWith(`${TOKEN}\n`) })).to.equal(TOKEN);
      expect(read({ token_file: fileWith(`${TOKEN}\r\n`) })).to.equal(TOKEN);
    });

    it('trims no more than that: a second newline is refused as part of the secret', () => {
      expect(failure({ token_file: fileWith(`${TOKEN}\n\n`) })).to.equal(
        `${AT}.token: the secret must be at least 16 printable ASCII characters, without spaces`,
      );
    });

    it('takes a file its group may read, but none any other user may read, write or run', () => {
      expect(read({ token_file: fileWith(TOKEN, 0o640) })).to.equal(TOKEN);
      expect(read({ token_file: fileWith(TOKEN, 0o400) })).to.equal(TOKEN);
      for (const mode of [0o601, 0o602, 0o604, 0o777]) {
        const path = fileWith(TOKEN, mode);
        expect(failure({ token_file: path }), mode.toString(8)).to.equal(
          `${AT}.token_file: ${path} is open to every user (mode ${mode.toString(8)}): chmod o-rwx it`,
        );
      }
    });

    it('names a directory by its error code, never its content', () => {
      expect(failure({ token_file: dir })).to.equal(`${AT}.token_file: cannot read ${dir} (EISDIR)`);
    });
  });

  describe('from the environment', () => {
    it('names a top-level key without a leading dot', () => {
      delete process.env[ENV];
      const message = (() => {
        try {
          readSecret(OptionsReader.of('', { redis_url_env: ENV }), 'redis_url');
        } catch (err) {
          return (err as Error).message;
        }
      })();
      expect(message).to.equal(`redis_url_env: environment variable ${ENV} is not set`);
    });

    it('reads the variable as it is, nothing trimmed', () => {
      process.env[ENV] = `  ${TOKEN}`;
      expect(failure({ token_env: ENV })).to.equal(
        `${AT}.token: the secret must be at least 16 printable ASCII characters, without spaces`,
      );
      process.env[ENV] = TOKEN;
      expect(read({ token_env: ENV })).to.equal(TOKEN);
    });
  });

  describe('the source', () => {
    it('must be exactly one of the two', () => {
      process.env[ENV] = TOKEN;
      const both = { token_file: fileWith(TOKEN), token_env: ENV };
      expect(failure(both)).to.equal(`${AT}.token_file or ${AT}.token_env: exactly one must be set`);
      expect(failure({})).to.equal(`${AT}.token_file or ${AT}.token_env: exactly one must be set`);
      expect(failure({ token_file: null, token_env: null })).to.equal(`${AT}.token_file or ${AT}.token_env: exactly one must be set`);
    });

    it('counts both keys as read, so done() refuses only the others', () => {
      process.env[ENV] = TOKEN;
      const options = OptionsReader.of(AT, { token_env: ENV, token_file: null, extra: 1 });
      expect(readSecret(options, 'token')).to.equal(TOKEN);
      expect(() => options.done()).to.throw(ConfigError, `${AT}.extra: unknown key`);
    });
  });

  describe('the secret itself', () => {
    const REFUSED = `${AT}.token: the secret must be at least 16 printable ASCII characters, without spaces`;
    const through = (secret: string) => {
      process.env[ENV] = secret;
      try {
        return read({ token_env: ENV });
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        expect((err as Error).message).to.equal(REFUSED);
        return 'refused';
      }
    };

    it('takes 16 characters and refuses 15', () => {
      expect(through('x'.repeat(16))).to.equal('x'.repeat(16));
      expect(through('x'.repeat(15))).to.equal('refused');
    });

    it('takes every printable ASCII character, "!" to "~"', () => {
      const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
      expect(through(printable)).to.equal(printable);
    });

    it('refuses a space, a tab, DEL and anything outside ASCII anywhere in it, without echoing it', () => {
      for (const odd of [' ', '\t', '\x7f', '\u00e9', '\u{1f511}']) {
        expect(through(`${'y'.repeat(16)}${odd}${'y'.repeat(4)}`), JSON.stringify(odd)).to.equal('refused');
      }
    });
  });
});
