/** A request body read up to its cap, cut when it stalls, and parsed. */
import type { IncomingMessage } from 'node:http';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * UTF-8 and JSON, without the stack trace V8 captures for the error either throws on a malformed
 * body (never shown; the client gets -32700): that capture was ~20% of the CPU a malformed
 * request costs.
 */
export function parseBody(body: Buffer): unknown {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return JSON.parse(utf8.decode(body));
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** What `readBody` reports for a body that brought no byte for its idle time. */
export const STALLED = Symbol('stalled');

/**
 * Collects the body up to `cap` bytes; calls back with undefined once the cap is passed, and with
 * STALLED once no byte has come for `idleMs`, when given (a body withheld must not hold the budget
 * for the whole request timeout, like nginx's client_body_timeout).
 */
export function readBody(
  req: IncomingMessage,
  cap: number,
  idleMs: number | undefined,
  done: (body: Buffer | undefined | typeof STALLED) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const stop = () => {
    if (idle === undefined) return void req.off('data', onData).off('end', onEnd);
    clearTimeout(idle);
    req.off('data', onData).off('end', onEnd).off('close', stop);
  };
  const idle =
    idleMs === undefined
      ? undefined
      : setTimeout(() => {
          stop();
          done(STALLED);
        }, idleMs);
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > cap) {
      stop();
      done(undefined);
      return;
    }
    chunks.push(chunk);
    idle?.refresh();
  };
  const onEnd = () => {
    stop();
    done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  };
  // A client that goes away mid-body only ends its own request; 'close' on the response cleans
  // up (and on the request, the idle timer). (An IncomingMessage emits 'error' only to listeners
  // it has, so none is needed.)
  req.on('data', onData).on('end', onEnd);
  if (idle !== undefined) req.once('close', stop);
}
