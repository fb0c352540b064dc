import { readFileSync, statSync } from 'node:fs';
import { ConfigError, type OptionsReader } from './reader.js';

/**
 * Reads a secret named `key` from `<key>_file` (a path; trailing newline trimmed) or
 * `<key>_env` (an environment variable name). Secrets are never accepted inline, so a config
 * file can be printed, diffed and logged without leaking them; error messages name the source,
 * never the value.
 */
export function readSecret(options: OptionsReader, key: string): string {
  const file = options.optionalString(`${key}_file`);
  const env = options.optionalString(`${key}_env`);
  const where = options.at(key);
  if ((file === undefined) === (env === undefined)) {
    throw new ConfigError(`${where}_file or ${where}_env: exactly one must be set`);
  }
  let secret: string | undefined;
  if (file !== undefined) {
    let mode: number;
    try {
      secret = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
      mode = statSync(file).mode;
    } catch (err) {
      throw new ConfigError(`${where}_file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    // As ssh does with keys: a secret any local user can read is no secret.
    if ((mode & 0o007) !== 0) {
      throw new ConfigError(`${where}_file: ${file} is open to every user (mode ${(mode & 0o777).toString(8)}): chmod o-rwx it`);
    }
  } else {
    secret = process.env[env!];
    if (secret === undefined) throw new ConfigError(`${where}_env: environment variable ${env} is not set`);
  }
  // A token of spaces (or with any) could never be presented in a Bearer header anyway.
  if (secret.length < 16 || !/^[\x21-\x7e]+$/.test(secret)) {
    throw new ConfigError(`${where}: the secret must be at least 16 printable ASCII characters, without spaces`);
  }
  return secret;
}
