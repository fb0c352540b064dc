/**
 * A warning that a client can cause, logged at most once per `everyMs` with how many times it
 * happened since the last line: a flood of refusals must not become a flood of log lines (the
 * disk and journald are shared with the node), nor be silenced entirely.
 */
import type { Fields, Logger } from './log.js';

export type ThrottledWarning = (fields?: Fields) => void;

export function throttledWarning(log: Logger, msg: string, everyMs = 10_000, now: () => number = Date.now): ThrottledWarning {
  let last = -Infinity;
  let since = 0;
  return (fields) => {
    since++;
    const at = now();
    if (at - last < everyMs) return;
    last = at;
    log.warn(msg, { ...fields, count: since });
    since = 0;
  };
}
