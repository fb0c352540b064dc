import { expect } from 'chai';
import {
  INGRESS_METHODS,
  KNOWN_METHODS,
  NODE_LOCAL_METHODS,
  PRICED_BY_SIZE,
  PROXIED_SVC_METHODS,
  READ_METHODS,
  SUBMISSION_METHOD,
  SUBMISSION_ONLY,
  SYNC_SUBMISSION_METHOD,
} from '../../src/methods.js';

const duplicatesIn = (names: readonly string[]) => names.filter((name, i) => names.indexOf(name) !== i);

describe('methods: the JSON-RPC surface', () => {
  describe('the standard read surface', () => {
    it('holds 49 distinct eth_, net_ and web3_ methods, and nothing else', () => {
      expect(READ_METHODS).to.have.length(49);
      expect(duplicatesIn(READ_METHODS)).to.deep.equal([]);
      expect(READ_METHODS.filter((name) => !/^(?:eth|net|web3)_[a-z][A-Za-z0-9]*$/.test(name))).to.deep.equal([]);
      expect(READ_METHODS.filter((name) => !name.startsWith('eth_'))).to.deep.equal([
        'net_listening',
        'net_peerCount',
        'net_version',
        'web3_clientVersion',
        'web3_sha3',
      ]);
    });

    it('holds no submission path, no signing method and no subscription (spec 4.3, 4.5)', () => {
      const forbidden = READ_METHODS.filter((name) =>
        /^(?:eth|mev|flashbots)_send|^eth_sign|^eth_(?:un)?subscribe$|^(?:personal|wallet|debug|admin)_/i.test(name),
      );
      expect(forbidden).to.deep.equal([]);
    });

    it('includes the reads the spec names by name (4.1, 4.2)', () => {
      for (const name of [
        'eth_maxPriorityFeePerGas',
        'eth_gasPrice',
        'eth_getBlockReceipts',
        'eth_getLogs',
        'eth_getRawTransactionByBlockHashAndIndex',
        'eth_getRawTransactionByBlockNumberAndIndex',
        'eth_getBlockTransactionCountByHash',
        'eth_getBlockTransactionCountByNumber',
        'eth_chainId',
      ]) {
        expect(READ_METHODS, name).to.include(name);
      }
    });
  });

  describe("the chain's own methods", () => {
    it('proxies exactly the three history methods of spec 4.1', () => {
      expect([...PROXIED_SVC_METHODS]).to.deep.equal(['svc_getSignatureSidecar', 'svc_getStrippedTransaction', 'svc_historyStatus']);
    });

    it('answers exactly the five node-local methods of spec 4.6 itself', () => {
      expect([...NODE_LOCAL_METHODS]).to.deep.equal([
        'svc_getRecentCommits',
        'svc_dropStats',
        'svc_nodeHealth',
        'svc_getCheckpointChain',
        'svc_getJournalTail',
      ]);
    });

    it('knows svc_validateTransaction nowhere: the ingress refuses it (spec 4.5)', () => {
      expect(KNOWN_METHODS.has('svc_validateTransaction')).to.equal(false);
    });
  });

  it('answers svc_estimateFrameGas itself (the gate)', () => {
    expect([...INGRESS_METHODS]).to.deep.equal(['svc_estimateFrameGas']);
  });

  describe('submissions', () => {
    it('are eth_sendRawTransaction and its EIP-7966 sync form, and only those', () => {
      expect([SUBMISSION_METHOD, SYNC_SUBMISSION_METHOD]).to.deep.equal(['eth_sendRawTransaction', 'eth_sendRawTransactionSync']);
      expect([...SUBMISSION_ONLY]).to.deep.equal(['eth_sendRawTransaction', 'eth_sendRawTransactionSync']);
    });
  });

  it('prices eth_feeHistory by size, a read the surface serves', () => {
    expect([...PRICED_BY_SIZE]).to.deep.equal(['eth_feeHistory']);
    for (const name of PRICED_BY_SIZE) expect(READ_METHODS as readonly string[]).to.include(name);
  });

  describe('KNOWN_METHODS (the metric labels)', () => {
    const parts: ReadonlyArray<readonly [string, readonly string[]]> = [
      ['reads', READ_METHODS],
      ['proxied svc', PROXIED_SVC_METHODS],
      ['submissions', [...SUBMISSION_ONLY]],
      ['node-local', NODE_LOCAL_METHODS],
      ['answered by the ingress', INGRESS_METHODS],
    ];

    it('is the union of the five sets, in their order', () => {
      expect([...KNOWN_METHODS]).to.deep.equal(parts.flatMap(([, names]) => names));
    });

    it('holds each method in one set only: 49 + 3 + 2 + 5 + 1 = 60', () => {
      const all = parts.flatMap(([, names]) => names);
      expect(duplicatesIn(all)).to.deep.equal([]);
      expect(KNOWN_METHODS.size).to.equal(60);
    });

    it('is keyed by exact name (no prototype members, no case folding)', () => {
      for (const name of ['constructor', '__proto__', 'toString', 'ETH_CHAINID', 'eth_chainid', 'eth_chainId ']) {
        expect(KNOWN_METHODS.has(name), name).to.equal(false);
      }
      expect(KNOWN_METHODS.has('eth_chainId')).to.equal(true);
    });
  });
});
