import { readFileSync } from 'node:fs';
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
  const where = `${options.path}.${key}`;
  if ((file === undefined) === (env === undefined)) {
    throw new ConfigError(`${where}_file or ${where}_env: exactly one must be set`);
  }
  let secret: string | undefined;
  if (file !== undefined) {
    try {
      secret = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new ConfigError(`${where}_file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else {
    secret = process.env[env!];
    if (secret === undefined) throw new ConfigError(`${where}_env: environment variable ${env} is not set`);
  }
  if (secret.length < 16) throw new ConfigError(`${where}: the secret must be at least 16 characters`);
  return secret;
}
