import { expect } from 'chai';
import { rpc } from '../../support/http.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

// Byte layouts the ingress must not touch: odd spacing, key order, and a trailing newline.
const HISTORY = (id: unknown) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tier":"tx-history","headBlock":"0x10","earliestFullBody":"0x8","historyCutoff":"0x0","persistedState":"0xf"}}\n`;
const BELOW_WINDOW = (id: unknown) =>
  `{"id":${JSON.stringify(id)}, "jsonrpc":"2.0", "error":{"code":4444,"message":"pruned history unavailable","data":{"earliest":"0x8"}}}`;

describe('proxied answers pass through untouched', () => {
  let el: StubEl;
  let ingress: TestIngress;

  before(async () => {
    el = await startStubEl({
      svc_historyStatus: HISTORY,
      eth_getBlockReceipts: BELOW_WINDOW,
      svc_getSignatureSidecar: (id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":null}`,
    });
    ingress = await startTestIngress(testConfig(el.url));
  });
  after(async () => {
    await ingress.shutdown();
    await el.close();
  });

  it('streams svc_historyStatus from the EL byte for byte', async () => {
    const reply = await rpc(ingress.url, 'svc_historyStatus', [], 'h');
    expect(reply.text).to.equal(HISTORY('h'));
    expect(reply.status).to.equal(200);
  });

  it('passes an EL error through untouched, 4444 included', async () => {
    const reply = await rpc(ingress.url, 'eth_getBlockReceipts', ['0x1'], 31);
    expect(reply.text).to.equal(BELOW_WINDOW(31));
    expect(reply.status).to.equal(200);
  });

  it('passes a null sidecar (pruned) through', async () => {
    const reply = await rpc(ingress.url, 'svc_getSignatureSidecar', ['0x1'], 2);
    expect(reply.text).to.equal('{"jsonrpc":"2.0","id":2,"result":null}');
  });

  it("does not pass the EL's Server header on", async () => {
    const reply = await rpc(ingress.url, 'svc_historyStatus');
    expect(reply.headers.server).to.equal(undefined);
    expect(reply.headers['content-type']).to.equal('application/json');
  });
});
