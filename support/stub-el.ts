/**
 * The one fake JSON-RPC upstream, speaking real HTTP on 127.0.0.1: for what no public EL
 * implements (the chain's own `svc_` methods and their error codes), for a consensus node, a
 * submission target or a validator's ingress, and for an EL that misbehaves. Each method maps to
 * its answer; a request no answer takes goes to `fallthrough` (a real anvil) unchanged, or gets
 * -32601. Every request is recorded.
 */
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as post } from 'undici';

/** A request as the stub received it, parsed. */
export interface StubRequest {
  readonly jsonrpc: string;
  readonly id: unknown;
  readonly method: string;
  readonly params: unknown;
}

/** One request as it arrived: parsed, its body byte for byte, and its HTTP headers. */
export interface StubCall {
  readonly request: StubRequest;
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
}

/** Reads the request and never answers: the connection stays open until the stub closes. */
export const HANG = Symbol('hang');
/** Destroys the connection without a byte of answer (a reset). */
export const CUT = Symbol('cut');

/**
 * What the stub sends. A string is the body of an HTTP 200 `application/json` answer. An object
 * sets the status (200), headers (over that content type) and body (none); with `dripMs` the body
 * goes out one byte every `dripMs` under its declared Content-Length. Or HANG, or CUT.
 */
export type StubReply =
  | string
  | { readonly status?: number; readonly headers?: OutgoingHttpHeaders; readonly body?: string; readonly dripMs?: number }
  | typeof HANG
  | typeof CUT;

/**
 * A method's answer, or a promise of it (an upstream that takes its time, or holds the answer
 * until the test releases it); undefined leaves the request to `fallthrough`.
 */
export type StubAnswer = (id: unknown, params: unknown, call: StubCall) => StubReply | undefined | Promise<StubReply | undefined>;

export interface StubElOptions {
  /** Where a request that no answer takes goes, unchanged (a real EL); without it, -32601. */
  readonly fallthrough?: string;
  /** Asked first for every request, whatever its method: a reply it returns (a fault, say) is sent instead. */
  readonly intercept?: (call: StubCall) => StubReply | undefined | Promise<StubReply | undefined>;
}

export interface StubEl {
  readonly url: string;
  /** Requests received, parsed, in arrival order. */
  readonly received: StubRequest[];
  /** The same requests' bodies, byte for byte. */
  readonly bodies: string[];
  /** Listens again on the same port after close(): an EL that restarts. */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json', server: 'stub-el/1.0' };

export async function startStubEl(answers: Record<string, StubAnswer> = {}, options: StubElOptions = {}): Promise<StubEl> {
  const received: StubRequest[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      const request = JSON.parse(body) as StubRequest;
      received.push(request);
      bodies.push(body);
      const call: StubCall = { request, body, headers: req.headers };
      const reply =
        (await options.intercept?.(call)) ??
        (Object.hasOwn(answers, request.method) ? await answers[request.method]!(request.id, request.params, call) : undefined);
      if (reply !== undefined) return send(res, reply);
      if (options.fallthrough !== undefined) return forward(options.fallthrough, body, res);
      send(res, JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'stub: no such method' } }));
    });
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    bodies,
    reopen: () => listen(port),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, reply: StubReply): void {
  // A held answer released after the stub closed has nowhere to go.
  if (reply === HANG || res.destroyed) return;
  if (reply === CUT) return void res.socket?.destroy();
  const { status = 200, headers = {}, body, dripMs } = typeof reply === 'string' ? { body: reply } : reply;
  if (dripMs === undefined) return void res.writeHead(status, { ...JSON_HEADERS, ...headers }).end(body);
  const bytes = Buffer.from(body ?? '');
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': String(bytes.length), ...headers });
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    res.write(bytes.subarray(sent, ++sent));
    if (sent < bytes.length) return;
    clearInterval(timer);
    res.end();
  }, dripMs);
}

/** Passes the body on to `url` and its answer back, status included; a failed EL resets the connection. */
async function forward(url: string, body: string, res: ServerResponse): Promise<void> {
  try {
    const reply = await post(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    res.writeHead(reply.statusCode, { 'content-type': 'application/json' }).end(Buffer.from(await reply.body.arrayBuffer()));
  } catch {
    res.destroy();
  }
}

/** An answer held until the test releases it: `arrived` settles when the first request reaches the stub. */
export function heldAnswer(result: unknown): { readonly answer: StubAnswer; readonly arrived: Promise<void>; release(): void } {
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let arrive = () => {};
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const answer: StubAnswer = async (id) => {
    arrive();
    await held;
    return JSON.stringify({ jsonrpc: '2.0', id, result });
  };
  return { answer, arrived, release };
}
