/**
 * allowlist: decides which methods may go further (spec 4.1, 4.5, 7).
 *
 * Passes the `eth_`/`net_`/`web3_` read surface, `eth_sendRawTransaction` (answered later by the
 * gate), the three proxied `svc_` methods, `svc_estimateFrameGas` (answered by the gate), `extra_methods` from YAML, and any request for which
 * auth recorded the `operator` fact (an operator method called with a valid token). Refuses with -32601: the signing methods ("holds no
 * keys"), `eth_subscribe`/`eth_unsubscribe` over HTTP (with how to poll; over WebSocket they pass, fact
 * `subscriber`, and the core answers them),
 * `svc_validateTransaction` ("not supported by the ingress"), everything else ("does not
 * exist", the same bytes as an unauthorised operator call). `eth_accounts` is answered `[]` here:
 * the endpoint holds no keys, and passed on it would list the EL's own (anvil's ten on the
 * devnet), which wallets and tools would then try to sign with. `web3_clientVersion` is answered
 * with `client_version` ("svc-ingress" by default): the EL's name, version and platform would tell
 * an attacker which of its bugs to try; `pass_client_version: true` lets the EL answer instead.
 *
 * Reads: facts `operator` and `subscriber`. Order: after auth, which records the first.
 */
import {
  errors,
  INGRESS_METHODS,
  NODE_LOCAL_METHODS,
  OPERATOR,
  PROXIED_SVC_METHODS,
  READ_METHODS,
  SUBMISSION_ONLY,
  SUBSCRIBER,
  type PluginModule,
  type RequestContext,
  type Verdict,
} from '../src/plugin.js';

const SIGNING_METHODS = [
  'eth_sendTransaction',
  'eth_sign',
  'eth_signTransaction',
  'eth_signTypedData',
  'eth_signTypedData_v1',
  'eth_signTypedData_v3',
  'eth_signTypedData_v4',
];
const INGRESS_REFUSED = ['svc_validateTransaction'];
const SUBSCRIPTIONS = new Set(['eth_subscribe', 'eth_unsubscribe']);
/** Submission paths (eth_sendRawTransactionSync, …Conditional, eth_sendBundle, mev_sendBundle, …): only the gated one may pass. */
const SUBMISSION_LIKE = /^(?:eth|mev|flashbots)_send/i;
/** Signing and key methods of any namespace: the endpoint holds no keys, and must not expose the EL's. */
const KEY_LIKE = /^(?:personal_|wallet_|account_|eth_sign|eth_accounts$)/i;
/**
 * The EL's administration, debugging and development namespaces: node control, peers, traces
 * that take seconds, the pool's contents, a development chain's state edits. An operator's typo
 * in extra_methods must not open them to the internet.
 */
const ADMIN_LIKE = /^(admin|debug|engine|miner|txpool|clique|les|anvil|hardhat|evm|ganache)_/i;

const NO_ACCOUNTS = Object.freeze({ result: Object.freeze([]) });

interface AllowlistOptions {
  readonly extraMethods: readonly string[];
  /** The answer to web3_clientVersion, or undefined to pass it to the EL. */
  readonly clientVersion: string | undefined;
}

export const allowlist: PluginModule<AllowlistOptions> = {
  name: 'allowlist',
  parseOptions(options) {
    const extraMethods = options.stringList('extra_methods', []);
    extraMethods.forEach((m, i) => {
      if (SIGNING_METHODS.includes(m) || INGRESS_REFUSED.includes(m)) {
        options.fail(`extra_methods[${i}]`, `${m} cannot be allowlisted`);
      }
      if (SUBMISSION_LIKE.test(m) && !SUBMISSION_ONLY.has(m)) {
        options.fail(
          `extra_methods[${i}]`,
          `${m} would reach the EL around the submission gate: submissions go through eth_sendRawTransaction only`,
        );
      }
      if (KEY_LIKE.test(m))
        options.fail(`extra_methods[${i}]`, `${m} is a signing or key method: this endpoint holds no keys and exposes none`);
      const admin = ADMIN_LIKE.exec(m);
      if (admin !== null) {
        options.fail(
          `extra_methods[${i}]`,
          `${m} is in the EL's ${admin[1]!.toLowerCase()}_ namespace (administration, debugging or development): it is never exposed on the public endpoint`,
        );
      }
    });
    const passClientVersion = options.boolean('pass_client_version', false);
    const clientVersion = options.optionalString('client_version');
    if (passClientVersion && clientVersion !== undefined) {
      options.fail('client_version', 'cannot be set with pass_client_version: true (the EL answers web3_clientVersion then)');
    }
    options.done();
    return { extraMethods, clientVersion: passClientVersion ? undefined : (clientVersion ?? 'svc-ingress') };
  },
  create({ extraMethods, clientVersion }) {
    // A Set, not an object: `constructor` or `__proto__` must be as unknown as any other name.
    // Node-local methods pass to local-methods, which answers them; svc_nodeHealth passes only
    // with the operator fact, like every operator method.
    const pass = new Set<string>([
      ...READ_METHODS,
      ...PROXIED_SVC_METHODS,
      ...SUBMISSION_ONLY,
      ...extraMethods,
      ...NODE_LOCAL_METHODS.filter((m) => m !== 'svc_nodeHealth'),
      ...INGRESS_METHODS,
    ]);
    const signing = new Set(SIGNING_METHODS);
    const refused = new Set(INGRESS_REFUSED);
    const ownVersion = clientVersion === undefined ? undefined : Object.freeze({ result: clientVersion });
    return {
      name: 'allowlist',
      handle({ request: { method }, facts }: RequestContext): Verdict {
        if (method === 'eth_accounts') return NO_ACCOUNTS;
        if (method === 'web3_clientVersion' && ownVersion !== undefined) return ownVersion;
        if (pass.has(method) || facts.get(OPERATOR) === true) return undefined;
        if (signing.has(method)) return { error: errors.signingRefused() };
        // Over WebSocket the core answers them (websocket.ts); over HTTP there is nobody to notify.
        if (SUBSCRIPTIONS.has(method)) return facts.get(SUBSCRIBER) === true ? undefined : { error: errors.subscriptionsRefused() };
        if (refused.has(method)) return { error: errors.notSupportedByIngress(method) };
        return { error: errors.methodNotFound() };
      },
    };
  },
};
