/**
 * API keys: keyed tenants with quotas of their own (issue 37, item 4). A key is sent as
 * `Authorization: Bearer <key>` or as the URL path's last segment (`https://rpc.example.org/<key>`,
 * 16-128 characters of [A-Za-z0-9_-]); the config holds only its SHA-256 (`printf %s KEY |
 * sha256sum`), inline (`api_keys`) or in a YAML file of the same list (`api_keys_file`, read again
 * on every reload). A request with a key known here is counted against `key:<name>`, in buckets
 * of its own (its `reads` / `submissions`, else the class's `per_source`) kept where the IP
 * buckets are (fleet-wide in Redis); the host-wide buckets still hold for everyone. A request
 * with no key is counted by its address, as before; one with a key not known here gets HTTP 401.
 * Keys are never logged: only names are, and only names label metrics.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { OptionsReader } from '../../src/plugin.js';
import type { BucketSpec } from './bucket.js';

export interface ApiKey {
  readonly name: string;
  readonly reads: BucketSpec | undefined;
  readonly submissions: BucketSpec | undefined;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const BEARER = /^Bearer\s+(\S+)$/i;
const PATH_KEY = /^[A-Za-z0-9_-]{16,128}$/;

/** `api_keys` and `api_keys_file`, by SHA-256 (hex). */
export function readApiKeys(options: OptionsReader, readBucket: (options: OptionsReader) => BucketSpec): ReadonlyMap<string, ApiKey> {
  const keys = new Map<string, ApiKey>();
  const names = new Set<string>();
  const add = (entries: readonly unknown[], at: string) =>
    entries.forEach((entry, i) => {
      const key = OptionsReader.of(`${at}[${i}]`, entry);
      const name = key.string('name');
      if (!NAME.test(name)) key.fail('name', 'must be 1-32 characters of a-z, 0-9, _ and -, starting with a letter or digit');
      const sha256 = key.string('sha256');
      if (!SHA256.test(sha256)) key.fail('sha256', "must be the key's SHA-256 as 64 lower-case hex digits");
      if (names.has(name)) key.fail('name', `"${name}" is named twice`);
      if (keys.has(sha256)) key.fail('sha256', 'is the same key as another entry');
      const bucket = (which: string) => key.optional(which, () => readBucket(key.child(which)));
      keys.set(sha256, { name, reads: bucket('reads'), submissions: bucket('submissions') });
      names.add(name);
      key.done();
    });
  add(options.rawList('api_keys'), options.at('api_keys'));
  const file = options.optionalString('api_keys_file');
  if (file !== undefined) {
    let list: unknown;
    try {
      list = parseYaml(readFileSync(file, 'utf8'));
    } catch (err) {
      options.fail('api_keys_file', `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message.split('\n')[0]}`);
    }
    if (!Array.isArray(list)) options.fail('api_keys_file', 'must hold a YAML list of keys');
    add(list, file);
  }
  return keys;
}

/** What a request presents: no key, a key known here, or one that is not. */
export type Presented = undefined | ApiKey | 'unknown';

/**
 * The key a request presents (bearer first, then the path). `operator`: the bearer is the
 * operator's token (auth's fact), not a key.
 */
export function presentedKey(
  keys: ReadonlyMap<string, ApiKey>,
  headers: IncomingHttpHeaders,
  path: string | undefined,
  operator: boolean,
): Presented {
  const authorization = headers.authorization;
  const bearer = operator || typeof authorization !== 'string' ? undefined : BEARER.exec(authorization)?.[1];
  const segment = path === undefined ? undefined : (path.split('?')[0] ?? '').split('/').at(-1);
  const secret = bearer ?? (segment !== undefined && PATH_KEY.test(segment) ? segment : undefined);
  if (secret === undefined) return undefined;
  return keys.get(createHash('sha256').update(secret).digest('hex')) ?? 'unknown';
}
