/**
 * allowlist: decides which methods may go further (spec 4.1, 4.5, 7).
 *
 * Passes the `eth_`/`net_`/`web3_` read surface, `eth_sendRawTransaction` (answered later by the
 * gate), the three proxied `svc_` methods, `extra_methods` from YAML, and any request for which
 * auth recorded the `operator` fact (an operator method called with a valid token). Refuses with -32601: the signing methods ("holds no
 * keys"), `svc_validateTransaction` ("not supported by the ingress"), everything else ("does not
 * exist", the same bytes as an unauthorised operator call).
 *
 * Reads: fact `operator`. Order: after auth, which records that fact.
 */
import { errors } from '../src/errors.js';
import { OPERATOR } from '../src/facts.js';
import type { PluginModule, RequestContext, Verdict } from '../src/plugin.js';

/** The standard read surface (ethereum/execution-apis) that every EL serves. */
export const READ_METHODS = [
  'eth_accounts', 'eth_blobBaseFee', 'eth_blockNumber', 'eth_call', 'eth_capabilities', 'eth_chainId',
  'eth_config', 'eth_createAccessList', 'eth_estimateGas', 'eth_feeHistory', 'eth_gasPrice',
  'eth_getBalance', 'eth_getBlockByHash', 'eth_getBlockByNumber', 'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash', 'eth_getBlockTransactionCountByNumber', 'eth_getCode',
  'eth_getFilterChanges', 'eth_getFilterLogs', 'eth_getLogs', 'eth_getProof',
  'eth_getRawTransactionByBlockHashAndIndex', 'eth_getRawTransactionByBlockNumberAndIndex',
  'eth_getRawTransactionByHash', 'eth_getStorageAt', 'eth_getStorageValues',
  'eth_getTransactionByBlockHashAndIndex', 'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionByHash', 'eth_getTransactionCount', 'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex', 'eth_getUncleByBlockNumberAndIndex', 'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber', 'eth_maxPriorityFeePerGas', 'eth_newBlockFilter', 'eth_newFilter',
  'eth_newPendingTransactionFilter', 'eth_protocolVersion', 'eth_simulateV1', 'eth_syncing',
  'eth_uninstallFilter',
  'net_listening', 'net_peerCount', 'net_version',
  'web3_clientVersion', 'web3_sha3',
] as const;

/** The chain's own history methods, proxied to the EL (spec 4.1). */
export const PROXIED_SVC_METHODS = ['svc_getSignatureSidecar', 'svc_getStrippedTransaction', 'svc_historyStatus'] as const;
export const SUBMISSION_METHOD = 'eth_sendRawTransaction';
const SIGNING_METHODS = ['eth_sendTransaction', 'eth_sign', 'eth_signTransaction', 'eth_signTypedData',
  'eth_signTypedData_v1', 'eth_signTypedData_v3', 'eth_signTypedData_v4'];
const INGRESS_REFUSED = ['svc_validateTransaction'];

interface AllowlistOptions {
  readonly extraMethods: readonly string[];
}

export const allowlist: PluginModule<AllowlistOptions> = {
  name: 'allowlist',
  parseOptions(options) {
    const extraMethods = options.stringList('extra_methods', []);
    extraMethods.forEach((m, i) => {
      if (SIGNING_METHODS.includes(m) || INGRESS_REFUSED.includes(m)) {
        options.fail(`extra_methods[${i}]`, `${m} cannot be allowlisted`);
      }
    });
    options.done();
    return { extraMethods };
  },
  create({ extraMethods }) {
    // A Set, not an object: `constructor` or `__proto__` must be as unknown as any other name.
    const pass = new Set<string>([...READ_METHODS, ...PROXIED_SVC_METHODS, SUBMISSION_METHOD, ...extraMethods]);
    const signing = new Set(SIGNING_METHODS);
    const refused = new Set(INGRESS_REFUSED);
    return {
      name: 'allowlist',
      handle({ request: { method }, facts }: RequestContext): Verdict {
        if (pass.has(method) || facts.get(OPERATOR) === true) return undefined;
        if (signing.has(method)) return { error: errors.signingRefused() };
        if (refused.has(method)) return { error: errors.notSupportedByIngress(method) };
        return { error: errors.methodNotFound() };
      },
    };
  },
};
