/**
 * The access log (`access_log` in the config; off by default): one JSON line per request, or per
 * `one_in` requests, on stderr beside the other log lines, whatever `log_level` says:
 * time, request id, source, method, HTTP status, JSON-RPC error code (of answers the ingress
 * wrote itself; an EL's answers are streamed unread), bytes, milliseconds. Nothing else of the
 * request is written: no params, no headers, no token or key.
 *
 * The request id is the client's `X-Request-Id` (a proxy's, say) when it is a plain token of at
 * most 128 characters, else one made here (process prefix + counter); either is echoed on the
 * answer. Without an access log, only a request id the client sent is echoed.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from './log.js';

export interface AccessEntry {
  readonly request_id: string | undefined;
  readonly source: string;
  readonly method: string | null;
  readonly status: number;
  readonly code: number | null;
  readonly bytes: number;
  readonly ms: number;
}

export type AccessLog = (entry: () => AccessEntry) => void;

/** Logs every `oneIn`-th request (by count, so that a sample is spread over time) to `log`, whatever its level. */
export function createAccessLog(oneIn: number, log: Pick<Logger, 'always'>): AccessLog {
  let seen = 0;
  return (entry) => {
    seen = (seen + 1) % oneIn;
    if (seen !== 0) return;
    log.always('access', { ...entry() });
  };
}

const CLIENT_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;
const PREFIX = randomBytes(4).toString('hex');
let made = 0;

/** The client's id if it is a plain token, else a new one when `make`, else none. */
export function requestIdOf(header: string | string[] | undefined, make: boolean): string | undefined {
  if (typeof header === 'string' && CLIENT_ID.test(header)) return header;
  return make ? `${PREFIX}-${(made++).toString(36)}` : undefined;
}

/** The JSON-RPC error code of a body the ingress wrote (formatResponse's shape), or null. */
export function errorCodeOf(body: string | undefined): number | null {
  const match = body === undefined ? null : /"error":\{"code":(-?\d+)/.exec(body);
  return match === null ? null : Number(match[1]);
}
