/**
 * Issue 37, "beside any EL": the shipped production config with only `upstreams.execution` set
 * (a plain EL, no consensus node): it starts, reads and submissions go to the EL, and the
 * node-local methods answer "method not found", as the start-up log says.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { receiptOf, rpc } from '../../support/http.js';
import { DEV_KEY, devTransfer } from '../../support/keys.js';
import { useAnvil } from '../helpers/el.js';

describe('the shipped config beside a plain EL: only upstreams.execution set (issue 37)', () => {
  const anvil = useAnvil();
  let ingress: IngressProcess;

  before(async () => {
    process.env.SVC_BESIDE_EL_TOKEN = 'beside-el-test-operator-token-01';
    const shipped = readFileSync('config/ingress.yaml', 'utf8');
    const yaml = shipped
      .replace('listen: 127.0.0.1:8545', 'listen: 127.0.0.1:0')
      .replace('metrics_listen: 127.0.0.1:9645', 'metrics_listen: 127.0.0.1:0')
      .replace('execution: http://127.0.0.1:18545', `execution: ${anvil.current.url}`)
      .replace(/\n {2}submit: \S+/, '')
      .replace(/\n {2}node: \S+/, '')
      .replace('token_file: /etc/svc-ingress/operator-token', 'token_env: SVC_BESIDE_EL_TOKEN');
    expect(yaml).to.not.match(/^ {2}(submit|node):/m);
    ingress = await startIngressProcess(yaml);
  });
  after(async () => {
    ingress?.child.kill('SIGTERM');
    await ingress?.exited;
  });

  it('says at start which methods it cannot serve without a node', async () => {
    expect(await ingress.waitForLog(/^local-methods: no upstreams.node/)).to.deep.include({
      level: 'warn',
      methods: ['svc_getRecentCommits', 'svc_dropStats', 'svc_nodeHealth', 'svc_getCheckpointChain', 'svc_getJournalTail'],
    });
  });

  it('answers reads from the EL and sends submissions to it', async () => {
    expect((await rpc(ingress.url, 'eth_chainId')).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
    const raw = await devTransfer(DEV_KEY, 0);
    const sent = JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', [raw])).text) as { result?: string };
    expect(sent.result, JSON.stringify(sent)).to.be.a('string');
    expect((await receiptOf<{ status: string }>(ingress.url, sent.result!)).status).to.equal('0x1');
  });

  it('answers the node-local methods "method not found", as a plain EL does', async () => {
    for (const method of ['svc_getRecentCommits', 'svc_dropStats', 'svc_getJournalTail']) {
      expect((await rpc(ingress.url, method, [])).text, method).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"the method does not exist/is not available"}}',
      );
    }
  });
});
