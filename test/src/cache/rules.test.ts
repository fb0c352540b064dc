import { expect } from 'chai';
import { cacheRule } from '../../../src/cache/rules.js';
import type { RpcRequest } from '../../../src/jsonrpc.js';

const HASH = `0x${'ab'.repeat(32)}`;
const ADDRESS = `0x${'cd'.repeat(20)}`;
const request = (method: string, params?: unknown[]): RpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method,
  ...(params === undefined ? {} : { params }),
});
const ruleOf = (method: string, params?: unknown[]) => {
  const rule = cacheRule(request(method, params));
  return rule === undefined ? undefined : rule.final === 'at' ? `at ${rule.number}` : rule.final;
};

describe('cache rules: which answers cannot change, and when (cache/rules.ts)', () => {
  it('keeps by hash and the chain id always; by number once finalized; a transaction or receipt with its block', () => {
    const cases: Array<[string, unknown[] | undefined, string | undefined]> = [
      ['eth_chainId', undefined, 'always'],
      ['eth_getBlockByHash', [HASH, false], 'always'],
      ['eth_getBlockByNumber', ['0x10', true], 'at 16'],
      ['eth_getBlockReceipts', ['0x10'], 'at 16'],
      ['eth_getTransactionByHash', [HASH], 'blockOfAnswer'],
      ['eth_getTransactionReceipt', [HASH], 'blockOfAnswer'],
      ['eth_getBalance', [ADDRESS, '0x5'], 'at 5'],
      ['eth_getStorageAt', [ADDRESS, '0x0', '0x5'], 'at 5'],
      ['eth_getBalance', [ADDRESS, { blockHash: HASH }], 'always'],
      ['eth_getCode', [ADDRESS, { blockNumber: '0x7' }], 'at 7'],
      ['eth_call', [{ to: ADDRESS }, '0x9'], 'at 9'],
      ['eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x20', address: ADDRESS }], 'at 32'],
      ['eth_getLogs', [{ blockHash: HASH }], 'blockOfAnswer'],
    ];
    for (const [method, params, expected] of cases)
      expect(ruleOf(method, params), `${method} ${JSON.stringify(params)}`).to.equal(expected);
  });

  it('never keeps what a tag names, what has no block, or what is malformed', () => {
    const cases: Array<[string, unknown[] | undefined]> = [
      ['eth_blockNumber', []],
      ['eth_getBlockByNumber', ['latest', false]],
      ['eth_getBlockByNumber', ['finalized', false]],
      ['eth_getBalance', [ADDRESS, 'latest']],
      ['eth_getBalance', [ADDRESS]],
      ['eth_getBalance', [ADDRESS, { blockHash: HASH, requireCanonical: true }]],
      ['eth_call', [{ to: ADDRESS }, 'safe']],
      ['eth_getLogs', [{ fromBlock: '0x1' }]],
      ['eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]],
      ['eth_getLogs', [{ fromBlock: '0x9', toBlock: '0x1' }]],
      ['eth_getBlockByHash', ['0x12', false]],
      ['eth_getBlockByNumber', ['0x010', false]],
      ['eth_gasPrice', []],
      ['eth_sendRawTransaction', ['0x00']],
    ];
    for (const [method, params] of cases) expect(ruleOf(method, params), `${method} ${JSON.stringify(params)}`).to.equal(undefined);
  });

  it('keys a request by its method and params as read, never its id', () => {
    const a = cacheRule({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x1', false] });
    const b = cacheRule({ jsonrpc: '2.0', id: 'other', method: 'eth_getBlockByNumber', params: ['0x1', false] });
    const c = cacheRule({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x1', true] });
    expect(a!.key).to.equal(b!.key);
    expect(a!.key).to.not.equal(c!.key);
  });
});
