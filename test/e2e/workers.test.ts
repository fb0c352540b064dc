/**
 * `workers: 2`: one svc-ingress primary, two workers on one port, sharing rate limits, the
 * duplicate window and in-flight counts through the primary (no Redis), with the workers'
 * metrics summed on the primary's operator listener.
 */
import { expect } from 'chai';
import { keccak256, Wallet } from 'ethers';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { runCli, startIngressProcess, writeConfig, type IngressProcess } from '../../support/child.js';
import { postFresh } from '../../support/http.js';
import { DEV_KEYS } from '../../support/keys.js';
import { useAnvil } from '../helpers/el.js';
import { testConfig } from '../helpers/ingress.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const BURST = 6;

const call = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/** Established connections to `port`, per process: the sockets each pid holds. */
function connectionsOf(pid: number, port: number): number {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set(
    readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[1]?.endsWith(hexPort) && f[3] === '01')
      .map((f) => f[9]),
  );
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]);
    } catch {
      return false;
    }
  }).length;
}

describe('workers: 2 processes on one port, sharing state through the primary', function () {
  this.timeout(60_000);
  const anvil = useAnvil({ extraArgs: ['--no-mining'] });
  let ingress: IngressProcess;
  let metricsUrl: string;
  let workerPids: number[];

  before(async () => {
    const plugins = `
  - batch-refuse
  - allowlist
  - rate-limit:
      submissions:
        per_source: {rate_per_second: 1, burst: ${BURST}}
  - gate:
      head_cache_ms: 0
      in_flight_cap: 2`;
    ingress = await startIngressProcess(
      testConfig(anvil.current.url, plugins, 'workers: 2\nmetrics_listen: 127.0.0.1:0').replace('log_level: debug', 'log_level: info'),
    );
    metricsUrl = String((await ingress.waitForLog('operator listener: /metrics, /livez, /readyz')).url);
    // Each worker logs for itself: its line may trail the primary's.
    workerPids = (await ingress.waitForLogs('worker listening', 2)).map((entry) => Number(entry.pid));
  });
  after(async () => {
    if (ingress.child.exitCode === null) ingress.child.kill('SIGTERM');
    expect(await ingress.exited).to.equal(0);
    for (const pid of workerPids) expect(() => process.kill(pid, 0), `worker ${pid} still running`).to.throw();
  });

  it('starts two workers, announces the port once they both listen, and spreads connections over both', async () => {
    expect(workerPids).to.have.length(2);
    expect(new Set(workerPids).size).to.equal(2);
    expect(workerPids).to.not.include(ingress.child.pid);
    const port = Number(new URL(ingress.url).port);
    const held = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const agent = new Agent({ connections: 1 });
        const reply = await request(ingress.url, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: call('eth_chainId', []),
        });
        expect(await reply.body.text()).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
        return agent;
      }),
    );
    try {
      for (const pid of workerPids) expect(connectionsOf(pid, port), `connections held by worker ${pid}`).to.be.at.least(1);
    } finally {
      await Promise.all(held.map((agent) => agent.close()));
    }
  });

  it('serves WebSocket subscriptions on both workers: each announces a new head to its subscribers', async () => {
    const port = Number(new URL(ingress.url).port);
    const clients = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const ws = new WebSocket(ingress.url.replace('http:', 'ws:'));
        const messages: string[] = [];
        const arrived = new Promise<void>((resolve) => ws.on('message', (data) => messages.push(data.toString()) === 2 && resolve()));
        await once(ws, 'open');
        ws.send(call('eth_subscribe', ['newHeads']));
        return { ws, messages, arrived };
      }),
    );
    try {
      for (const pid of workerPids) expect(connectionsOf(pid, port), `WebSocket connections held by worker ${pid}`).to.be.at.least(1);
      // Once every client has its subscription, a block is mined; each worker's feed sees it.
      for (let i = 0; clients.some((c) => c.messages.length === 0); i++) {
        if (i > 250) throw new Error('not every client subscribed within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const head = BigInt((await postFresh(anvil.current.url, call('eth_blockNumber', []))).json.result as string);
      // A feed announces the blocks after its first poll: blocks are mined until every client heard of one.
      let all = false;
      void Promise.all(clients.map((c) => c.arrived)).then(() => (all = true));
      for (let i = 0; !all; i++) {
        if (i > 50) throw new Error('not every subscriber heard of a new head within 50 blocks');
        await postFresh(anvil.current.url, call('anvil_mine', ['0x1']));
        await Promise.race([Promise.all(clients.map((c) => c.arrived)), new Promise((resolve) => setTimeout(resolve, 100))]);
      }
      for (const { messages } of clients) {
        const [answer, note] = messages.map(
          (m) => JSON.parse(m) as { result?: string; params?: { subscription: string; result: { number: string } } },
        );
        expect(answer!.result).to.match(/^0x[0-9a-f]{32}$/);
        expect(note!.params!.subscription).to.equal(answer!.result);
        expect(BigInt(note!.params!.result.number) > head).to.equal(true);
      }
    } finally {
      for (const { ws } of clients) ws.close();
    }
  });

  it('holds one source to one submission bucket across both workers', async () => {
    const replies = [];
    for (let i = 0; i < 2 * BURST + 2; i++)
      replies.push(await postFresh(ingress.url, call('eth_sendRawTransaction', [`0x02${'ab'.repeat(40)}`])));
    const limited = replies.filter((r) => r.status === 429 && r.json.error.code === -32005).length;
    const judged = replies.filter((r) => r.status === 200 && r.json.error.data.reason === 'rlp-invalid').length;
    expect(limited + judged).to.equal(replies.length);
    // One bucket: the burst, plus at most one token refilled; a bucket per worker would pass 2 × BURST.
    expect(judged).to.be.within(BURST, BURST + 1);
  });

  it('refuses a duplicate on every worker once one worker admitted it, and caps in-flight per sender across workers', async () => {
    // Another source than the test above, whose bucket is spent.
    const submit = async (raw: string) => (await postFresh(ingress.url, call('eth_sendRawTransaction', [raw]), '127.0.0.6')).json;
    const wallet = new Wallet(DEV_KEYS[4]);
    const transfer = (nonce: number) =>
      wallet.signTransaction({
        chainId: 8141,
        nonce,
        to: RECIPIENT,
        value: 1n,
        gasLimit: 21_000,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 0n,
        type: 2,
      });
    const first = await transfer(0);
    expect((await submit(first)).result).to.equal(keccak256(first));
    for (let i = 0; i < 2; i++) expect((await submit(first)).error).to.deep.equal({ code: -32000, message: 'already known' });
    const second = await transfer(1);
    expect((await submit(second)).result).to.equal(keccak256(second));
    // Whichever worker takes the third, the sender already has two in flight.
    expect((await submit(await transfer(2))).error.data.reason).to.equal('in-flight-cap');
  });

  it("sums both workers' counts on the primary's /metrics", async () => {
    const read = async (series: RegExp) => {
      const text = await (await request(`${metricsUrl}/metrics`)).body.text();
      return Number(series.exec(text)?.[1] ?? 0);
    };
    const count = () => read(/^svc_ingress_requests_total\{method="eth_blockNumber"[^}]*\} (\d+)$/m);
    const timed = () => read(/^svc_ingress_request_duration_seconds_count\{method="eth_blockNumber"\} (\d+)$/m);
    const before = await count();
    const timedBefore = await timed();
    for (let i = 0; i < 6; i++) expect((await postFresh(ingress.url, call('eth_blockNumber', []))).status).to.equal(200);
    expect((await count()) - before).to.equal(6);
    expect((await timed()) - timedBefore).to.equal(6);
    expect((await request(`${metricsUrl}/livez`)).statusCode).to.equal(200);
  });

  it('validates a reloaded file once in the primary, then has every worker reload it', async () => {
    const original = readFileSync(ingress.configPath, 'utf8');
    const refusedAt = ingress.lines.length;
    writeFileSync(ingress.configPath, original.replace('plugins:', 'plugins: [oops'));
    ingress.child.kill('SIGHUP');
    await ingress.waitForLog('reload refused: keeping the running configuration', refusedAt);

    writeFileSync(ingress.configPath, original);
    const reloadAt = ingress.lines.length;
    ingress.child.kill('SIGHUP');
    await ingress.waitForLog('configuration reloaded', reloadAt);
    const first = ingress.lines.findIndex((line, i) => i >= reloadAt && line.includes('"msg":"configuration reloaded"'));
    await ingress.waitForLog('configuration reloaded', first + 1);
    // Refused once, by the primary: no worker read the broken file.
    expect(ingress.lines.slice(refusedAt).filter((line) => line.includes('reload refused'))).to.have.length(1);
    expect((await postFresh(ingress.url, call('eth_chainId', []))).json.result).to.equal('0x1fcd');
  });

  it('replaces a worker that dies, and keeps answering meanwhile', async () => {
    const mark = ingress.lines.length;
    process.kill(workerPids[0]!, 'SIGKILL');
    await ingress.waitForLog('worker died: starting another', mark);
    for (let i = 0; i < 4; i++) expect((await postFresh(ingress.url, call('eth_chainId', []))).json.result).to.equal('0x1fcd');
    const replacement = await ingress.waitForLog('worker listening', mark);
    workerPids = [workerPids[1]!, Number(replacement.pid)];
    expect((await postFresh(ingress.url, call('eth_chainId', []))).json.result).to.equal('0x1fcd');
  });

  it('drains and exits 0 when every process is signalled at once, as a supervisor may do', async () => {
    // A request in flight on each worker keeps them draining while the primary's SIGTERM follows.
    const inFlight = Array.from({ length: 4 }, () => postFresh(ingress.url, call('eth_chainId', [])));
    for (const pid of workerPids) process.kill(pid, 'SIGTERM');
    ingress.child.kill('SIGTERM');
    for (const reply of await Promise.allSettled(inFlight)) {
      if (reply.status === 'fulfilled') expect(reply.value.json.result).to.equal('0x1fcd');
    }
    expect(await ingress.exited).to.equal(0);
  });
});

describe('workers: a start that fails', () => {
  it('exits 1 with the reason when the workers cannot listen', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as AddressInfo).port;
      const child = runCli([
        '--config',
        writeConfig(
          testConfig('http://127.0.0.1:9', '\n  - allowlist', 'workers: 2').replace('listen: 127.0.0.1:0', `listen: 127.0.0.1:${port}`),
        ),
      ]);
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).to.equal(1);
      expect(stderr).to.include('EADDRINUSE');
      expect(stderr).to.include('"msg":"start failed"');
    } finally {
      busy.close();
    }
  });
});
