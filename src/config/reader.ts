/**
 * Reads one YAML mapping into typed options, naming the YAML path in every complaint and
 * refusing keys nobody asked for (`done()`): a misspelt key must fail at start, not be ignored.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Raw = Record<string, unknown>;

export class OptionsReader {
  private readonly seen = new Set<string>();

  private constructor(
    readonly path: string,
    private readonly raw: Raw,
  ) {}

  /** A reader over `value`, which must be a mapping; null or absent reads as an empty one. */
  static of(path: string, value: unknown): OptionsReader {
    if (value === null || value === undefined) return new OptionsReader(path, {});
    if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`${path}: must be a mapping`);
    return new OptionsReader(path, value as Raw);
  }

  /** The keys present, for mappings whose keys are data (e.g. method names). */
  keys(): string[] {
    return Object.keys(this.raw);
  }

  has(key: string): boolean {
    return this.raw[key] !== undefined && this.raw[key] !== null;
  }

  fail(key: string, why: string): never {
    throw new ConfigError(`${this.at(key)}: ${why}`);
  }

  string(key: string, fallback?: string): string {
    const value = this.take(key);
    if (value === undefined) return fallback ?? this.fail(key, 'is required');
    if (typeof value !== 'string' || value === '') this.fail(key, 'must be a non-empty string');
    return value;
  }

  /** An upstream URL: http or https, no credentials inline (they would end up in logs). */
  httpUrl(key: string, fallback?: string): string {
    const value = this.string(key, fallback);
    let parsed: URL | undefined;
    try {
      parsed = new URL(value);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.username || parsed.password) {
      this.fail(key, 'must be an http:// or https:// URL without credentials');
    }
    return value;
  }

  optionalString(key: string): string | undefined {
    return this.optional(key, () => this.string(key));
  }

  /** `read()` when `key` has a value; otherwise undefined, the key (absent or null) counted as read. */
  optional<T>(key: string, read: () => T): T | undefined {
    if (this.has(key)) return read();
    this.take(key);
    return undefined;
  }

  integer(key: string, fallback: number, range: { min?: number; max?: number } = {}): number {
    const value = this.take(key) ?? fallback;
    const min = range.min ?? 1;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      this.fail(key, min === 1 ? 'must be a positive integer' : `must be an integer >= ${min}`);
    }
    if (range.max !== undefined && value > range.max) this.fail(key, `must be at most ${range.max}`);
    return value;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.take(key) ?? fallback;
    if (typeof value !== 'boolean') this.fail(key, 'must be true or false');
    return value;
  }

  stringList(key: string, fallback: readonly string[]): readonly string[] {
    const value = this.take(key) ?? fallback;
    if (!Array.isArray(value)) this.fail(key, 'must be a list of strings');
    value.forEach((item, i) => {
      if (typeof item !== 'string' || item === '') this.fail(`${key}[${i}]`, 'must be a non-empty string');
    });
    return Object.freeze([...(value as string[])]);
  }

  /** A list whose items the caller reads itself (naming `key[i]` in its complaints). */
  rawList(key: string): readonly unknown[] {
    const value = this.take(key) ?? [];
    if (!Array.isArray(value)) this.fail(key, 'must be a list');
    return value;
  }

  child(key: string): OptionsReader {
    return OptionsReader.of(this.at(key), this.take(key));
  }

  /** Refuses every key that no read asked for. Call once all options are read. */
  done(): void {
    for (const key of Object.keys(this.raw)) {
      if (!this.seen.has(key)) this.fail(key, 'unknown key');
    }
  }

  private take(key: string): unknown {
    this.seen.add(key);
    const value = this.raw[key];
    return value === null ? undefined : value;
  }

  /** The YAML path of `key`, as complaints name it. */
  at(key: string): string {
    return this.path === '' ? key : `${this.path}.${key}`;
  }
}
