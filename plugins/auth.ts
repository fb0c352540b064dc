/**
 * auth: operator methods (default `svc_nodeHealth`, spec 5) need the operator bearer token in
 * `Authorization: Bearer <token>`. With a valid token it records the `operator` fact and passes;
 * without one, or with a wrong one, it answers exactly what an unknown method gets (-32601 from
 * the same factory), so a prober cannot tell the method exists.
 *
 * Guessing is throttled: a peer gets `guesses_per_minute` refused tries (a burst of as many);
 * past them its operator calls are refused without looking at the token at all (the right one
 * included), with the same answer, until its bucket refills. Refusals are logged at warn,
 * throttled too.
 *
 * Writes: fact `operator`. Order: before allowlist, which reads that fact.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  errors,
  MemoryBuckets,
  OPERATOR,
  readSecret,
  throttledWarning,
  type PluginModule,
  type RequestContext,
  type Verdict,
} from '../src/plugin.js';

interface AuthOptions {
  readonly token: string;
  readonly operatorMethods: readonly string[];
  readonly guessesPerMinute: number;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Both sides are hashed first so the comparison takes the same time whatever the lengths. */
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

export const auth: PluginModule<AuthOptions> = {
  name: 'auth',
  parseOptions(options) {
    const token = readSecret(options, 'token');
    const operatorMethods = options.stringList('operator_methods', ['svc_nodeHealth']);
    // The token unlocks node-local operator methods only: never a method that would reach the EL
    // past the gate (eth_sendTransaction, anvil_*, debug_*).
    const foreign = operatorMethods.find((method) => !method.startsWith('svc_'));
    if (foreign !== undefined) options.fail('operator_methods', `only svc_ methods can be operator methods, not ${foreign}`);
    const guessesPerMinute = options.integer('guesses_per_minute', 10, { min: 1 });
    options.done();
    return { token, operatorMethods, guessesPerMinute };
  },
  create({ token, operatorMethods, guessesPerMinute }, { log }) {
    const guesses = new MemoryBuckets({ ratePerSecond: guessesPerMinute / 60, burst: guessesPerMinute });
    const throttled = (peer: string) => guesses.peek(peer) < 1;
    const expected = digest(token);
    const guarded = new Set(operatorMethods);
    // Guessing is seen at the default level, without flooding it: the latest peer and a count.
    const refusedWarning = throttledWarning(log, 'operator method refused: no valid token (throttled: count since the last line)');
    const authorised = (header: string | undefined): boolean => {
      const presented = BEARER.exec(header ?? '')?.[1];
      // Compare even when nothing was presented, so both paths cost the same.
      return timingSafeEqual(digest(presented ?? ''), expected) && presented !== undefined;
    };
    return {
      name: 'auth',
      methods: guarded,
      handle({ request, peer, facts }: RequestContext): Verdict {
        if (!guarded.has(request.method)) return undefined;
        if (throttled(peer.address) || !authorised(peer.headers.authorization)) {
          guesses.take(peer.address, 1);
          refusedWarning({ method: request.method, peer: peer.address });
          return { error: errors.methodNotFound() };
        }
        log.debug('operator method authorised', { method: request.method, peer: peer.address });
        facts.set(OPERATOR, true);
        return undefined;
      },
    };
  },
};
