/**
 * Structured logging: one JSON object per line on stderr (journald keeps it as is). Callers
 * pass facts as fields; secrets are never passed, so nothing needs redacting here.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** An info line written whatever the level (the access log: asked for on its own). */
  always(msg: string, fields?: Fields): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const line = (lvl: LogLevel) => (msg: string, fields?: Fields) => {
    const head = { time: new Date().toISOString(), level: lvl, msg };
    // The head keeps its place and its values whatever the fields are named; a bigint
    // field (a nonce, a head) is written as its decimal string instead of throwing.
    write(`${JSON.stringify(fields === undefined ? head : Object.assign({ ...head }, fields, head), bigintAsString)}\n`);
  };
  const at = (lvl: LogLevel) => (RANK[lvl] < RANK[level] ? () => {} : line(lvl));
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), always: line('info') };
}

const bigintAsString = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

/** The message and stack of an unexpected error, for the log only. */
export function describeError(err: unknown): Fields {
  return err instanceof Error ? { error: err.message, stack: err.stack } : { error: String(err) };
}
