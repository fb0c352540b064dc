/**
 * JSON-RPC 2.0 envelopes: reading one request object strictly, and writing answers.
 *
 * Why the request is re-serialised before it goes upstream: JSON.parse keeps the last of two
 * duplicate keys, geth matches member names case-insensitively and reth rejects duplicates. If
 * the ingress forwarded the client's bytes, a request such as
 * `{"method":"eth_chainId","METHOD":"debug_x"}` could be read one way here and another way by
 * the EL. Forwarding `canonicalBody` (built from exactly the values inspected) closes that gap.
 */
import { errors, type RpcError } from './errors.js';

export type RpcId = string | number | null;

/** A validated request. Frozen: plugins read it, never change it. */
export interface RpcRequest {
  readonly jsonrpc: '2.0';
  readonly id: RpcId;
  readonly method: string;
  /** Absent when the client sent no params. */
  readonly params?: readonly unknown[] | Readonly<Record<string, unknown>>;
}

export type Answer = { readonly result: unknown } | { readonly error: RpcError };

/** application/json, and the two older JSON-RPC types geth accepts too. */
const JSON_CONTENT_TYPE = /^application\/(?:json|json-rpc|jsonrequest)\s*(?:;|$)/i;

/** A JSON media type, parameters allowed (`application/json; charset=utf-8`): requests and EL answers alike. */
export function isJsonContentType(value: string | undefined): boolean {
  return value === 'application/json' || (value !== undefined && JSON_CONTENT_TYPE.test(value));
}

const MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);
const MAX_METHOD_LENGTH = 128;
// Real Ethereum params nest a few levels (eth_call state overrides about five); 64 is generous.
const MAX_PARAMS_DEPTH = 64;
// Method names on the Ethereum JSON-RPC surface are ASCII identifiers; refusing anything else
// keeps unicode look-alikes and escape tricks out of every later lookup.
const METHOD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Whether `id` can be echoed exactly: strings, null, and integers JSON round-trips losslessly.
 * Fractional ids (JSON-RPC 2.0: "SHOULD NOT") are refused here because reth and anvil refuse
 * them with an id-less error, which the client could not match to its call.
 */
export function isValidId(id: unknown): id is RpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/** The id to answer with when a message is refused: its own id when readable, otherwise null. */
export function idOf(message: unknown): RpcId {
  if (message !== null && typeof message === 'object' && !Array.isArray(message)) {
    const id = (message as Record<string, unknown>).id;
    if (isValidId(id)) return id;
  }
  return null;
}

export type EnvelopeResult =
  | { readonly ok: true; readonly request: RpcRequest }
  | { readonly ok: false; readonly id: RpcId; readonly error: RpcError };

/** Reads one JSON-RPC 2.0 request object, refusing anything the EL could read differently. */
export function readRequest(message: unknown): EnvelopeResult {
  const refuse = (error: RpcError): EnvelopeResult => ({ ok: false, id: idOf(message), error });
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return refuse(errors.invalidRequest('the body must be one JSON-RPC request object'));
  }
  const m = message as Record<string, unknown>;
  for (const key of Object.keys(m)) {
    if (!MEMBERS.has(key)) {
      return refuse(errors.invalidRequest(`unexpected member "${printable(key)}"`));
    }
  }
  if (m.jsonrpc !== '2.0') return refuse(errors.invalidRequest('"jsonrpc" must be "2.0"'));
  if (!('id' in m)) return { ok: false, id: null, error: errors.notificationRefused() };
  if (!isValidId(m.id)) {
    return refuse(errors.invalidRequest('"id" must be a string, an integer within ±2^53 or null'));
  }
  const method = m.method;
  if (typeof method !== 'string') return refuse(errors.invalidRequest('"method" must be a string'));
  if (method.length > MAX_METHOD_LENGTH || !METHOD_NAME.test(method)) {
    return refuse(errors.invalidRequest('"method" is not a valid method name'));
  }
  // "params": null is read as no params at all (geth and reth accept it), so the EL gets [].
  const params = m.params === null ? [] : m.params;
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    return refuse(errors.invalidRequest('"params" must be an array or an object'));
  }
  if (params !== undefined) {
    const problem = freezeWithin(params, MAX_PARAMS_DEPTH);
    if (problem !== undefined) return refuse(errors.invalidRequest(PARAMS_PROBLEMS[problem]));
  }
  const request: RpcRequest =
    params === undefined
      ? { jsonrpc: '2.0', id: m.id, method }
      : { jsonrpc: '2.0', id: m.id, method, params: params as RpcRequest['params'] };
  return { ok: true, request: Object.freeze(request) };
}

/**
 * The bytes the upstream receives: exactly the members that were inspected, in a fixed order.
 * Equal to `JSON.stringify(request)`, built by hand around the params because every read passes
 * here (the method is a plain identifier, so it needs no escaping).
 */
export function canonicalBody(request: RpcRequest): string {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"method":"${request.method}"`;
  return request.params === undefined ? `${head}}` : `${head},"params":${JSON.stringify(request.params)}}`;
}

/** One response object, serialised. The only place response JSON is written. */
export function formatResponse(id: RpcId, answer: Answer): string {
  if ('error' in answer) {
    const { code, message, data } = answer.error;
    const error = data === undefined ? { code, message } : { code, message, data };
    return JSON.stringify({ jsonrpc: '2.0', id, error });
  }
  return JSON.stringify({ jsonrpc: '2.0', id, result: answer.result });
}

function printable(key: string): string {
  return key.length > 32 || /[^\x20-\x7e]/.test(key) ? JSON.stringify(key).slice(1, -1).slice(0, 32) : key;
}

type ParamsProblem = 'deep' | 'inexact' | 'unicode';

const PARAMS_PROBLEMS: Record<ParamsProblem, string> = {
  deep: `"params" is nested deeper than ${MAX_PARAMS_DEPTH} levels`,
  inexact: '"params" holds a number JSON cannot carry exactly (beyond ±2^53, or out of range): send it as a hex string',
  unicode: '"params" holds a string with a lone UTF-16 surrogate',
};

// String.prototype.isWellFormed (ES2024, in every Node this project supports).
const wellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Freezes a parsed JSON value in place, and says what would make the EL read something else than
 * what the plugins inspected: nesting deeper than `maxDepth` (the recursion stops there, so
 * hostile nesting cannot overflow the stack here or later in JSON.stringify); a number that does
 * not survive the round trip (`1e400` is parsed as Infinity and re-serialised as null, 2^64 + 1
 * loses its last digits); a string or key with a lone surrogate (re-serialised as an escape the
 * EL answers without an id). The value is left partly frozen when it fails.
 */
function freezeWithin(value: object, maxDepth: number): ParamsProblem | undefined {
  if (maxDepth === 0) return 'deep';
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const child of value) {
      const problem = problemOf(child, maxDepth);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  for (const key in value) {
    if (!wellFormed(key)) return 'unicode';
    const problem = problemOf((value as Record<string, unknown>)[key], maxDepth);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** What is wrong with one member of a value `freezeWithin` is given `maxDepth` levels of. */
function problemOf(child: unknown, maxDepth: number): ParamsProblem | undefined {
  if (typeof child === 'string') return wellFormed(child) ? undefined : 'unicode';
  if (typeof child === 'number')
    return Number.isFinite(child) && (!Number.isInteger(child) || Number.isSafeInteger(child)) ? undefined : 'inexact';
  if (child !== null && typeof child === 'object') return freezeWithin(child, maxDepth - 1);
  return undefined;
}
