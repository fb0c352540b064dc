/**
 * The JSON-RPC surface the ingress serves (spec 4), in one place: the allowlist passes it, and
 * metrics label requests with these names only (anything else is "other", so a client cannot
 * grow the label set).
 */

/** The standard read surface (ethereum/execution-apis) that every EL serves. */
export const READ_METHODS = [
  'eth_accounts',
  'eth_blobBaseFee',
  'eth_blockNumber',
  'eth_call',
  'eth_capabilities',
  'eth_chainId',
  'eth_config',
  'eth_createAccessList',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_gasPrice',
  'eth_getBalance',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getCode',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_getLogs',
  'eth_getProof',
  'eth_getRawTransactionByBlockHashAndIndex',
  'eth_getRawTransactionByBlockNumberAndIndex',
  'eth_getRawTransactionByHash',
  'eth_getStorageAt',
  'eth_getStorageValues',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionByHash',
  'eth_getTransactionCount',
  'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_maxPriorityFeePerGas',
  'eth_newBlockFilter',
  'eth_newFilter',
  'eth_newPendingTransactionFilter',
  'eth_protocolVersion',
  'eth_simulateV1',
  'eth_syncing',
  'eth_uninstallFilter',
  'net_listening',
  'net_peerCount',
  'net_version',
  'web3_clientVersion',
  'web3_sha3',
] as const;

/** The chain's own history methods, proxied to the EL (spec 4.1). */
export const PROXIED_SVC_METHODS = ['svc_getSignatureSidecar', 'svc_getStrippedTransaction', 'svc_historyStatus'] as const;
export const SUBMISSION_METHOD = 'eth_sendRawTransaction';
/** EIP-7966: the same submission, answered with its receipt (or a timeout). */
export const SYNC_SUBMISSION_METHOD = 'eth_sendRawTransactionSync';
/** The `methods` of a plugin that acts on submissions only (src/plugin.ts): every one is gated alike. */
export const SUBMISSION_ONLY: ReadonlySet<string> = new Set([SUBMISSION_METHOD, SYNC_SUBMISSION_METHOD]);

/**
 * Reads whose work grows with their params: rate-limit keeps their request tab, and the
 * plugin that answers one takes from it by its size (fee-rewrite: blocks × percentiles).
 */
export const PRICED_BY_SIZE: ReadonlySet<string> = new Set(['eth_feeHistory']);

/** Answered by the ingress itself: a frame transaction's gas, frame by frame (the gate). */
export const INGRESS_METHODS = ['svc_estimateFrameGas'] as const;

/** Answered by the ingress from the node's local API (spec 4.6). */
export const NODE_LOCAL_METHODS = [
  'svc_getRecentCommits',
  'svc_dropStats',
  'svc_nodeHealth',
  'svc_getCheckpointChain',
  'svc_getJournalTail',
] as const;

export const KNOWN_METHODS: ReadonlySet<string> = new Set<string>([
  ...READ_METHODS,
  ...PROXIED_SVC_METHODS,
  ...SUBMISSION_ONLY,
  ...NODE_LOCAL_METHODS,
  ...INGRESS_METHODS,
]);
