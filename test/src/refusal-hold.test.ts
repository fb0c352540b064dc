import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { HOLD_MAX_MS, holdFor, SourceHolds } from '../../src/refusal-hold.js';

const HOLD_MS = 400;
/** 127.0.0.83 speaks for others (a trusted proxy); everyone else is their own address. */
const sourceOf = (address: string) => (address === '127.0.0.83' ? null : undefined);

describe('refusal hold', () => {
  it('holds for the wait told, at most HOLD_MAX_MS and half the keep-alive timeout', () => {
    expect(holdFor(250, 5_000)).to.equal(250);
    expect(holdFor(60_000, 5_000)).to.equal(HOLD_MAX_MS);
    expect(holdFor(60_000, 0)).to.equal(HOLD_MAX_MS);
    expect(holdFor(900, 1_000)).to.equal(500);
    expect(holdFor(-5, 5_000)).to.equal(0);
  });

  describe('on a server', () => {
    let server: Server;
    let holds: SourceHolds;
    let port: number;
    const sockets: Socket[] = [];

    beforeEach(async () => {
      holds = new SourceHolds();
      // POST /refuse: a 429 telling its client to wait HOLD_MS; anything else: 200.
      server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          if (req.url === '/refuse') {
            holds.holdAfter(res, HOLD_MS, sourceOf);
            res.writeHead(429, { 'content-length': 1 }).end('x');
          } else res.writeHead(200, { 'content-length': 1 }).end('y');
        });
      });
      server.on('connection', (socket: Socket) => holds.admit(socket, sourceOf));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      port = (server.address() as AddressInfo).port;
    });
    afterEach(async () => {
      for (const socket of sockets.splice(0)) socket.destroy();
      server.closeAllConnections();
      server.close();
    });

    const open = async (from: string): Promise<Socket> => {
      const socket = connect({ port, host: '127.0.0.1', localAddress: from });
      sockets.push(socket);
      socket.on('error', () => {});
      await once(socket, 'connect');
      return socket;
    };
    /** Sends a POST to `path` on `socket`; resolves with its status line and the time it took. */
    const ask = async (socket: Socket, path: string): Promise<{ status: string; ms: number; at: number }> => {
      const started = performance.now();
      socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n`);
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      const at = performance.now();
      return { status: chunk.toString().split('\r\n', 1)[0]!, ms: at - started, at };
    };

    it("reads nothing more from a refused connection, nor from its source's new ones, until the wait has passed; others are served", async () => {
      const refused = await open('127.0.0.81');
      expect((await ask(refused, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const told = performance.now();
      const fresh = await open('127.0.0.81');
      const other = await open('127.0.0.82');
      const [again, sameSource, otherSource] = await Promise.all([ask(refused, '/ok'), ask(fresh, '/ok'), ask(other, '/ok')]);
      expect([again.status, sameSource.status, otherSource.status]).to.deep.equal(Array(3).fill('HTTP/1.1 200 OK'));
      // Timers may fire a millisecond or two early; nothing is read before the hold ends.
      expect(again.at - told).to.be.at.least(HOLD_MS - 5);
      expect(sameSource.at - told).to.be.at.least(HOLD_MS - 5);
      expect(otherSource.at).to.be.below(again.at);
      expect(otherSource.at).to.be.below(sameSource.at);
      // Once the wait has passed, nothing is held.
      const [next, newer] = await Promise.all([ask(refused, '/ok'), open('127.0.0.81').then((socket) => ask(socket, '/ok'))]);
      expect(next.ms).to.be.below(HOLD_MS);
      expect(newer.ms).to.be.below(HOLD_MS);
    });

    it("never holds a trusted proxy's connection, which carries others' requests", async () => {
      const proxy = await open('127.0.0.83');
      expect((await ask(proxy, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const refused = await open('127.0.0.84');
      expect((await ask(refused, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const [viaProxy, held] = await Promise.all([ask(proxy, '/ok'), ask(refused, '/ok')]);
      expect([viaProxy.status, held.status]).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
      expect(viaProxy.at).to.be.below(held.at);
      // Only the source refused on its own connection is held.
      expect(holds.size).to.equal(1);
    });
  });
});
