/**
 * Issue 25 rows F2b, F1c and F6, replayed against the running ingress (its own process, the
 * shipped production file, a real anvil): one source re-opening connections cannot take
 * `max_connections` from another; bodies withheld before their last byte hold at most
 * `max_body_bytes_in_flight` of memory; large bodies from one source, charged before they are
 * read, leave another source's latency near its baseline. Each figure is printed beside its
 * reference, measured in the same run.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { startIngressProcess, type IngressProcess } from '../../support/child.js';
import { postFresh } from '../../support/http.js';
import { memoryOf } from '../../support/log-bomb.js';
import { chainIdMedianUntil } from '../../support/victim-latency.js';
import { useAnvil } from '../helpers/el.js';

const CHAIN_ID = '{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}';
const call = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/** The shipped file in front of `elUrl`, on a free port, with `topLevel` lines in place of its connection and body limits. */
function productionYaml(elUrl: string, topLevel: string): string {
  process.env.SVC_CONNECTIONS_TOKEN = 'connections-test-operator-token-01';
  return readFileSync('config/ingress.yaml', 'utf8')
    .replace('listen: 127.0.0.1:8545', 'listen: 127.0.0.1:0')
    .replace('metrics_listen: 127.0.0.1:9645', '')
    .replace('execution: http://127.0.0.1:18545', `execution: ${elUrl}`)
    .replace('submit: http://127.0.0.1:9651', `submit: ${elUrl}`)
    .replace('node: http://127.0.0.1:9651', `node: ${elUrl}`)
    .replace('token_file: /etc/svc-ingress/operator-token', 'token_env: SVC_CONNECTIONS_TOKEN')
    .replace(/^max_body_bytes_in_flight: .*$/m, '')
    .replace('max_connections: 10000', topLevel);
}

async function withIngress<T>(yaml: string, run: (ingress: IngressProcess) => Promise<T>): Promise<T> {
  const ingress = await startIngressProcess(yaml);
  try {
    return await run(ingress);
  } finally {
    ingress.child.kill('SIGTERM');
    await ingress.exited;
  }
}

const portOf = (ingress: IngressProcess) => Number(new URL(ingress.url).port);

describe('connections and bodies: one source cannot take what others need', function () {
  this.timeout(90_000);
  const anvil = useAnvil();

  describe('F2b: connections per source, and at max_connections', () => {
    /**
     * `attackers` sources (127.0.0.31 on) keep 100 connections each open, idle, re-opening each as
     * soon as it is closed, while 127.0.0.39 opens 40 new connections one after another, a call on
     * each; the victim's failures.
     */
    async function victimFailures(ingress: IngressProcess, attackers: number): Promise<number> {
      let attacking = true;
      const sockets = new Set<Socket>();
      const open = (from: string) => {
        if (!attacking) return;
        const socket = connect({ host: '127.0.0.1', port: portOf(ingress), localAddress: from });
        sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          sockets.delete(socket);
          setImmediate(() => open(from));
        });
      };
      for (let a = 0; a < attackers; a++) for (let i = 0; i < 100; i++) open(`127.0.0.${31 + a}`);
      // The attackers' connections are in before the victim starts.
      await new Promise((resolve) => setTimeout(resolve, 300));
      let failures = 0;
      try {
        for (let i = 0; i < 40; i++) {
          try {
            const { status, json } = await postFresh(ingress.url, call('eth_chainId', []), '127.0.0.39');
            if (status !== 200 || JSON.stringify(json) !== CHAIN_ID) failures++;
          } catch {
            failures++;
          }
        }
      } finally {
        attacking = false;
        for (const socket of sockets) socket.destroy();
      }
      return failures;
    }

    it('with max_connections 64, another source gets every one of its new connections served, by one source or four', async () => {
      const uncapped = await withIngress(
        productionYaml(anvil.current.url, 'max_connections: 64\nmax_connections_per_source: 64'),
        (ingress) => victimFailures(ingress, 1),
      );
      // The default: 8 (a sixty-fourth of max_connections, at least 8).
      const one = await withIngress(productionYaml(anvil.current.url, 'max_connections: 64'), (ingress) => victimFailures(ingress, 1));
      // Four sources at a quarter each (the former default) fill the 64: each new connection of
      // another source takes the place of the idlest of the busiest source's.
      const four = await withIngress(productionYaml(anvil.current.url, 'max_connections: 64\nmax_connections_per_source: 16'), (ingress) =>
        victimFailures(ingress, 4),
      );
      console.log(
        `      F2b victim connections failed of 40: ${uncapped} beside one source uncapped, ${one} with the default cap (8), ${four} beside four sources of 16`,
      );
      expect(one).to.equal(0);
      expect(four).to.equal(0);
    });
  });

  describe('F1c: bodies withheld before their last byte', () => {
    const BODY_BYTES = 520_000;
    const CONNECTIONS = 400;

    /**
     * Opens 400 connections (from four loopback sources, 100 each), each sending the headers and
     * all but the last byte of a 520 KB body; returns the ingress's RSS growth (MiB) and how many
     * were refused.
     */
    async function withheld(ingress: IngressProcess): Promise<{ growthMiB: number; refused: number; closed: number; served: number }> {
      const pid = ingress.child.pid!;
      // Warm: a few complete requests, so the baseline includes what serving any body allocates.
      for (let i = 0; i < 5; i++) expect((await postFresh(ingress.url, call('eth_chainId', []))).status).to.equal(200);
      const before = memoryOf(pid).rssKiB;
      const head = `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${BODY_BYTES}\r\n\r\n`;
      const body = Buffer.alloc(BODY_BYTES - 1, 0x20);
      let refused = 0;
      let closed = 0;
      const sockets: Socket[] = [];
      const written = Array.from({ length: CONNECTIONS }, (_, i) => {
        const socket = connect({ host: '127.0.0.1', port: portOf(ingress), localAddress: `127.0.1.${1 + (i % 4)}` });
        sockets.push(socket);
        let answered = '';
        socket.on('data', (chunk: Buffer) => {
          answered += chunk.toString('latin1');
          if (answered.startsWith('HTTP/1.1 503 ') || answered.startsWith('HTTP/1.1 429 ')) refused++;
        });
        // A refused body is not read: the write fails once the ingress closes.
        socket.on('error', () => {});
        return new Promise<void>((resolve) => {
          socket.once('close', () => {
            closed++;
            resolve();
          });
          socket.write(head);
          socket.write(body, () => resolve());
        });
      });
      await Promise.all(written);
      // Whatever the kernel still buffers reaches the ingress within moments: its peak RSS.
      let peak = memoryOf(pid).rssKiB;
      for (let quiet = 0; quiet < 5; ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const now = memoryOf(pid).rssKiB;
        if (now > peak + 1024) {
          peak = now;
          quiet = 0;
        } else quiet++;
      }
      const closedByIngress = closed;
      // Meanwhile another source (127.0.0.1) is served: an ordinary call, and a large body of its own.
      const served = (await postFresh(ingress.url, call('eth_chainId', []))).status;
      const large = (await postFresh(ingress.url, call('eth_chainId', [' '.repeat(300_000)]))).status;
      for (const socket of sockets) socket.destroy();
      return { growthMiB: (peak - before) / 1024, refused, closed: closedByIngress, served: served === 200 && large !== 503 ? 200 : 0 };
    }

    it('holds at most max_body_bytes_in_flight (64 MiB) of 400 withheld 520 KB bodies, an eighth per source, refusing the rest unread', async () => {
      const topLevel = 'max_connections: 1000\nmax_connections_per_source: 100';
      const unbounded = await withIngress(
        productionYaml(anvil.current.url, `${topLevel}\nmax_body_bytes_in_flight: 1073741824`).replace(
          / {2}- rate-limit:\n(?: {6}.*\n|\s*#.*\n)*/,
          '',
        ),
        withheld,
      );
      const bounded = await withIngress(
        productionYaml(anvil.current.url, topLevel).replace(/ {2}- rate-limit:\n(?: {6}.*\n|\s*#.*\n)*/, ''),
        withheld,
      );
      console.log(
        `      F1c RSS growth: ${unbounded.growthMiB.toFixed(0)} MiB with a 1 GiB budget (${unbounded.refused} refused), ` +
          `${bounded.growthMiB.toFixed(0)} MiB with the default 64 MiB (${bounded.closed} closed by the ingress, ${bounded.refused} of them with the 503 or 429 read)`,
      );
      // Each of the four sources may hold an eighth of 64 MiB: 16 bodies each.
      expect(bounded.closed).to.be.at.least(CONNECTIONS - 4 * 16);
      // A fifth source is not refused by what the four hold.
      expect(bounded.served).to.equal(200);
      // The budget, plus what 400 connections cost besides (up to a 64 KiB read each before a
      // refusal closes it, the heap around the chunks held): 73-97 MiB measured, against 193-199
      // MiB without the budget. Bounded by twice the budget, and well below the unbudgeted run.
      expect(bounded.growthMiB).to.be.below(2 * 64);
      expect(bounded.growthMiB).to.be.below(0.6 * unbounded.growthMiB);
    });
  });

  describe('D1: bodies that never come (issue 34)', () => {
    const SOURCES = 8;
    const PER_SOURCE = 16;
    /** About an ML-DSA-65 frame transfer's body: ~11 KB of raw transaction as hex. */
    const TRANSFER_BODY = call('eth_sendRawTransaction', [`0x06${'ab'.repeat(11_000)}`]);

    /**
     * 8 sources keep 16 connections each declaring a body of max_body_bytes (512 KiB) and sending
     * none of it, each re-opened as soon as it is closed; meanwhile 127.0.0.1 sends 30 bodies of
     * an ML-DSA transfer's size. Returns the victim's statuses, and how the attackers' connections ended.
     */
    async function transfersUnder(ingress: IngressProcess): Promise<{ victim: Record<string, number>; cut: number }> {
      let attacking = true;
      let cut = 0;
      const sockets = new Set<Socket>();
      const head = `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 524288\r\n\r\n`;
      const open = (from: string) => {
        if (!attacking) return;
        const socket = connect({ host: '127.0.0.1', port: portOf(ingress), localAddress: from });
        sockets.add(socket);
        socket.on('error', () => {});
        socket.on('data', (chunk: Buffer) => {
          if (chunk.toString('latin1').startsWith('HTTP/1.1 408 ')) cut++;
        });
        socket.once('close', () => {
          sockets.delete(socket);
          open(from);
        });
        socket.write(head);
      };
      for (let s = 1; s <= SOURCES; s++) for (let c = 0; c < PER_SOURCE; c++) open(`127.0.3.${s}`);
      // Until the budget holds what the attackers declared: 8 x 16 x 512 KiB = 64 MiB.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const victim: Record<string, number> = {};
      for (let i = 0; i < 30; i++) {
        const reply = await postFresh(ingress.url, TRANSFER_BODY);
        victim[reply.status] = (victim[reply.status] ?? 0) + 1;
      }
      attacking = false;
      for (const socket of sockets) socket.destroy();
      return { victim, cut };
    }

    it("refuses none of another source's ML-DSA-sized bodies while 8 sources hold the budget with bodies that never come", async () => {
      // Without rate-limit's body tokens, which slow the filling down (a body's tokens are one per
      // 4 KiB): the budget full at once, as sources enough would fill it.
      const yaml = productionYaml(anvil.current.url, 'max_connections: 10000').replace(/ {2}- rate-limit:\n(?: {6}.*\n|\s*#.*\n)*/, '');
      const result = await withIngress(yaml, transfersUnder);
      console.log(`      D1 victim's 22 KB bodies under 8 x 16 header-only bodies: ${JSON.stringify(result.victim)}`);
      // Answered by the gate (a refusal of the junk transaction, HTTP 200), never by the budget.
      expect(result.victim).to.deep.equal({ 200: 30 });
    });

    it('cuts a body that brings no byte for body_idle_ms with 408, so that it stops holding the budget', async () => {
      const yaml = productionYaml(anvil.current.url, 'max_connections: 10000').replace('  body_idle_ms: 5000', '  body_idle_ms: 200');
      await withIngress(yaml, async (ingress) => {
        const socket = connect({ host: '127.0.0.1', port: portOf(ingress), localAddress: '127.0.3.20' });
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('error', () => {});
        const started = performance.now();
        socket.write('POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 524288\r\n\r\n');
        await once(socket, 'close');
        expect(performance.now() - started).to.be.within(150, 3_000);
        expect(text).to.match(/^HTTP\/1\.1 408 Request Timeout\r\n/);
        expect(text).to.include('"message":"the request body stopped arriving"');
      });
    });
  });

  describe('F6: large bodies charged before they are read', () => {
    /**
     * The victim's (127.0.0.42) eth_chainId p50 over 2 s, one call at a time, while (given a
     * content type) support/body-flood.ts sends 510 KB bodies of that type from 127.0.0.41 on 8
     * connections, in a process of its own; and the flood's answers by status.
     */
    async function victimP50(ingress: IngressProcess, contentType?: string): Promise<{ p50: number; flood: string }> {
      const flood =
        contentType === undefined
          ? undefined
          : spawn(process.execPath, ['dist/support/body-flood.js'], {
              env: {
                ...process.env,
                FLOOD_URL: ingress.url,
                FLOOD_FROM: '127.0.0.41',
                FLOOD_CONNECTIONS: '8',
                FLOOD_BYTES: '510000',
                FLOOD_MS: '2500',
                FLOOD_CONTENT_TYPE: contentType,
              },
              stdio: ['ignore', 'pipe', 'inherit'],
            });
      let out = '';
      flood?.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = flood === undefined ? Promise.resolve() : once(flood, 'exit');
      if (flood !== undefined) while (!out.includes('flooding\n')) await once(flood.stdout!, 'data');
      const p50 = await chainIdMedianUntil(ingress.url, '127.0.0.42', Date.now() + 2_000);
      await exited;
      return { p50, flood: out.split('\n')[1] ?? '' };
    }

    it("keeps another source's p50 within 3x its baseline while one source sends 510 KB bodies on 8 connections", async () => {
      await withIngress(productionYaml(anvil.current.url, 'max_connections: 10000'), async (ingress) => {
        const baseline = (await victimP50(ingress)).p50;
        // The same flood refused 415 on its headers: what the load generator's own CPU costs the
        // victim on this 2-core machine, the ingress doing next to nothing.
        const reference = await victimP50(ingress, 'text/plain');
        const attacked = await victimP50(ingress, 'application/json');
        console.log(
          `      F6 victim p50: ${baseline.toFixed(1)} ms idle, ${reference.p50.toFixed(1)} ms beside a flood refused by its ` +
            `content type, ${attacked.p50.toFixed(1)} ms under the 510 KB flood (x${(attacked.p50 / baseline).toFixed(1)} idle, ` +
            `x${(attacked.p50 / reference.p50).toFixed(1)} reference); the flood's answers: ${attacked.flood}`,
        );
        expect(attacked.flood).to.match(/"429":/);
        // 5 ms of slack: other work on the shared 2-core machine moves a 2-3 ms p50 by that much
        // from one 2 s window to the next. Before the body was charged unread: 4.2 -> 102 ms.
        expect(attacked.p50).to.be.at.most(3 * Math.max(baseline, reference.p50) + 5);
      });
    });
  });
});
