import { expect } from 'chai';
import { EventEmitter, once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { HOLD_MAX_MS, holdFor, SourceHolds } from '../../src/refusal-hold.js';

const HOLD_MS = 400;
/** Timers may fire a millisecond or two early. */
const EARLY_MS = 5;
/** 127.0.0.83 speaks for others (a trusted proxy); everyone else is their own address. */
const sourceOf = (address: string) => (address === '127.0.0.83' ? null : undefined);
/** A status line, whole. */
const STATUS = /(HTTP\/1\.1 \d{3} [^\r]*)\r\n/;
const request = (path: string) => `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n`;

describe('refusal hold', () => {
  it('holds for the wait given, at most HOLD_MAX_MS and half the keep-alive timeout', () => {
    expect(holdFor(250, 5_000)).to.equal(250);
    expect(holdFor(60_000, 5_000)).to.equal(HOLD_MAX_MS);
    expect(holdFor(60_000, 0)).to.equal(HOLD_MAX_MS);
    expect(holdFor(900, 1_000)).to.equal(500);
    expect(holdFor(-5, 5_000)).to.equal(0);
  });

  describe('on a server that uses it as the ingress does', () => {
    let server: Server;
    let holds: SourceHolds;
    let port: number;
    const sockets: Socket[] = [];
    /** When the server last finished writing a refusal: its hold starts then. */
    let refusedAt = 0;
    /** Called when the server starts reading /late's body. */
    let lateRead = () => {};
    /** Each request's path as the server got it. */
    const seen: string[] = [];

    beforeEach(async () => {
      holds = new SourceHolds(5_000, sourceOf);
      // POST /refuse: a 429 holding its source HOLD_MS; anything else: 200.
      server = createServer((req, res) => {
        seen.push(req.url ?? '');
        const serve = () => {
          // /late: its body read a moment later, as a handler that first decides something does.
          if (req.url === '/late') {
            setTimeout(() => {
              req.resume();
              lateRead();
            }, 50);
          } else req.resume();
          req.on('end', () => {
            if (req.url === '/refuse') {
              res.once('finish', () => (refusedAt = performance.now()));
              holds.refuse(res, HOLD_MS, () => res.writeHead(429, { 'content-length': 1 }).end('x'));
            } else res.writeHead(200, { 'content-length': 1 }).end('y');
          });
        };
        const wait = holds.heldFor(req.socket);
        if (wait > 0) return holds.defer(req.socket, wait, serve);
        serve();
      });
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
    /** The status lines `socket` receives, each with when it arrived. */
    const statuses = (socket: Socket) => {
      const seen: Array<{ status: string; at: number }> = [];
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        for (let match = STATUS.exec(text); match !== null; match = STATUS.exec(text)) {
          seen.push({ status: match[1]!, at: performance.now() });
          text = text.slice(match.index + match[0].length);
        }
        // Keep what may begin a status line the next chunk ends.
        text = text.slice(-64);
      });
      return seen;
    };
    /** Sends a POST to `path` on `socket`; resolves with its status line and when it arrived. */
    const ask = async (socket: Socket, path: string): Promise<{ status: string; at: number }> => {
      socket.write(request(path));
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      return { status: chunk.toString().split('\r\n', 1)[0]!, at: performance.now() };
    };

    it("reads nothing more from a refused connection until the hold has passed; its source's new connections and others are served", async () => {
      const refused = await open('127.0.0.81');
      expect((await ask(refused, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const told = performance.now();
      // A NAT neighbour's new connection from the same address, and another address.
      const fresh = await open('127.0.0.81');
      const other = await open('127.0.0.82');
      const [again, sameSource, otherSource] = await Promise.all([ask(refused, '/ok'), ask(fresh, '/ok'), ask(other, '/ok')]);
      expect([again.status, sameSource.status, otherSource.status]).to.deep.equal(Array(3).fill('HTTP/1.1 200 OK'));
      expect(again.at - told).to.be.at.least(HOLD_MS - EARLY_MS);
      expect(sameSource.at).to.be.below(again.at);
      expect(sameSource.at - told).to.be.below(HOLD_MS / 2);
      expect(otherSource.at).to.be.below(again.at);
      // Once it has passed, nothing is held.
      const before = performance.now();
      expect((await ask(refused, '/ok')).at - before).to.be.below(HOLD_MS);
      expect(holds.heldSockets).to.equal(0);
    });

    it('keeps the hold though Node resumes the socket itself when a body behind the refusal is read', async () => {
      const socket = await open('127.0.0.85');
      const seen = statuses(socket);
      // Pipelined: /late's headers with the refusal, its body not sent yet; the server starts
      // reading that body while the refusal's hold runs (Node resumes the socket to read it).
      const reading = new Promise<void>((resolve) => (lateRead = resolve));
      socket.write(`${request('/refuse')}POST /late HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\n`);
      await reading;
      socket.write('hello');
      while (seen.length < 2) await once(socket, 'data');
      expect(seen.map(({ status }) => status)).to.deep.equal(['HTTP/1.1 429 Too Many Requests', 'HTTP/1.1 200 OK']);
      expect(seen[1]!.at - refusedAt).to.be.at.least(HOLD_MS - EARLY_MS);
    });

    it("leaves a held source's other open connections alone: they may carry another class of its requests", async () => {
      const other = await open('127.0.0.86');
      const refused = await open('127.0.0.86');
      expect((await ask(refused, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const told = performance.now();
      const [held, free] = await Promise.all([ask(refused, '/ok'), ask(other, '/ok')]);
      expect([held.status, free.status]).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
      expect(free.at).to.be.below(held.at);
      expect(held.at - told).to.be.at.least(HOLD_MS - EARLY_MS);
    });

    it("never holds a trusted proxy's connection, which carries others' requests: its client's refusal is written after the hold instead", async () => {
      const proxy = await open('127.0.0.83');
      const asked = performance.now();
      const refusal = await ask(proxy, '/refuse');
      expect(refusal.status).to.equal('HTTP/1.1 429 Too Many Requests');
      expect(refusal.at - asked).to.be.at.least(HOLD_MS - EARLY_MS);
      // Once written, the proxy's connection is read at once: the next request is another client's.
      const before = performance.now();
      const viaProxy = await ask(proxy, '/ok');
      expect(viaProxy.status).to.equal('HTTP/1.1 200 OK');
      expect(viaProxy.at - before).to.be.below(HOLD_MS / 2);
      expect(holds.heldSockets).to.equal(0);
    });

    it("writes a trusted proxy's delayed refusals at once for a drain", async () => {
      const proxy = await open('127.0.0.83');
      const asked = performance.now();
      const refusal = ask(proxy, '/refuse');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await holds.releaseAll();
      const { status, at } = await refusal;
      expect(status).to.equal('HTTP/1.1 429 Too Many Requests');
      expect(at - asked).to.be.below(HOLD_MS / 2);
    });

    it('lets go of every hold for a drain, and holds nothing after: requests waiting unread are answered at once', async () => {
      const refused = await open('127.0.0.87');
      expect((await ask(refused, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const told = performance.now();
      const answer = ask(refused, '/ok');
      while (holds.heldSockets < 1) await new Promise((resolve) => setImmediate(resolve));
      await holds.releaseAll();
      const unread = await answer;
      expect(unread.status).to.equal('HTTP/1.1 200 OK');
      expect(unread.at - told).to.be.below(HOLD_MS - 100);
      expect(holds.heldSockets).to.equal(0);
      // Refused again during the drain: not held.
      expect((await ask(refused, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const before = performance.now();
      expect((await ask(refused, '/ok')).at - before).to.be.below(HOLD_MS - 100);
    });

    it('resolves a drain only once what the held connections hold has been read', async () => {
      const refused = await open('127.0.0.89');
      expect((await ask(refused, '/refuse')).status).to.equal('HTTP/1.1 429 Too Many Requests');
      const answer = ask(refused, '/waiting-unread');
      while (holds.heldSockets < 1) await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen, 'unread while held').to.not.include('/waiting-unread');
      await holds.releaseAll();
      expect(seen).to.include('/waiting-unread');
      await answer;
    });

    it('serves a request read from a held connection once the hold has passed, and closes the connection on a second', async () => {
      const socket = await open('127.0.0.88');
      const closed = once(socket, 'close');
      const started = performance.now();
      const firstServed = new Promise<number>((resolve) => holds.defer(socket, HOLD_MS, () => resolve(performance.now())));
      holds.defer(socket, HOLD_MS, () => expect.fail('the second was served'));
      await closed;
      expect((await firstServed) - started).to.be.at.least(HOLD_MS - EARLY_MS);
    });
  });

  describe('its bookkeeping, on stand-in sockets and responses', () => {
    /** A socket as holds read one: its peer, pause and resume (Node emits 'resume'), close and destroy. */
    function standIn(remoteAddress: string) {
      const socket = new EventEmitter() as EventEmitter & { remoteAddress: string; destroyed: boolean; paused: boolean } & Record<
          string,
          unknown
        >;
      Object.assign(socket, {
        remoteAddress,
        destroyed: false,
        paused: false,
        pause: () => {
          socket.paused = true;
          return socket;
        },
        resume: () => {
          socket.paused = false;
          socket.emit('resume');
          return socket;
        },
        destroy: () => {
          socket.destroyed = true;
          socket.emit('close');
        },
      });
      return socket as unknown as Socket & { paused: boolean };
    }
    const responseOn = (socket: Socket) => Object.assign(new EventEmitter(), { req: { socket } }) as unknown as ServerResponse;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('writes a refusal with no hold at once, on a trusted proxy too', () => {
      const holds = new SourceHolds(5_000, sourceOf);
      let written = 0;
      holds.refuse(responseOn(standIn('127.0.0.83')), 0, () => written++);
      holds.refuse(responseOn(standIn('127.0.0.9')), 0, () => written++);
      expect([written, holds.heldSockets]).to.deep.equal([2, 0]);
    });

    it("never writes a trusted proxy's delayed refusal once its client has gone", async () => {
      const holds = new SourceHolds(5_000, sourceOf);
      const res = responseOn(standIn('127.0.0.83'));
      let written = false;
      holds.refuse(res, 30, () => (written = true));
      res.emit('close');
      await sleep(60);
      expect(written).to.equal(false);
    });

    it('holds from when the refusal is written, tells a request read meanwhile how long is left, and extends to the later of two holds', async () => {
      const holds = new SourceHolds(5_000, sourceOf);
      const socket = standIn('127.0.0.9');
      const other = standIn('127.0.0.10');
      expect(holds.heldFor(socket), 'nothing held').to.equal(0);
      const res = responseOn(socket);
      holds.refuse(res, 200, () => {});
      expect(holds.heldSockets, 'not before it is written').to.equal(0);
      res.emit('finish');
      expect(holds.heldFor(socket)).to.be.within(150, 200);
      expect([holds.heldFor(other), socket.paused, other.paused]).to.deep.equal([0, true, false]);
      const again = responseOn(socket);
      holds.refuse(again, 50, () => {});
      again.emit('finish');
      expect(holds.heldFor(socket), 'a shorter hold does not shorten it').to.be.above(100);
      const longer = responseOn(socket);
      holds.refuse(longer, 400, () => {});
      longer.emit('finish');
      expect(holds.heldFor(socket), 'a longer one extends it').to.be.above(300);
      await sleep(450);
      expect([holds.heldSockets, socket.paused], 'and lets go when it has passed').to.deep.equal([0, false]);
    });

    it('holds no socket already closed, and nothing for a request deferred no time', () => {
      const holds = new SourceHolds(5_000, sourceOf);
      const gone = standIn('127.0.0.9');
      gone.destroy();
      const res = responseOn(gone);
      holds.refuse(res, 300, () => {});
      res.emit('finish');
      holds.defer(standIn('127.0.0.10'), 0, () => {});
      expect(holds.heldSockets).to.equal(0);
    });

    it('pauses a held socket again when Node resumes it, lets go when the hold passes, and forgets a socket that closed', async () => {
      const holds = new SourceHolds(5_000, sourceOf);
      const socket = standIn('127.0.0.9');
      const res = responseOn(socket);
      holds.refuse(res, 40, () => {});
      res.emit('finish');
      socket.resume();
      expect(socket.paused, 'paused again').to.equal(true);
      await sleep(80);
      expect([socket.paused, holds.heldSockets]).to.deep.equal([false, 0]);
      socket.resume();
      expect(socket.paused, 'no longer held').to.equal(false);
      const closing = standIn('127.0.0.11');
      const refused = responseOn(closing);
      holds.refuse(refused, 1_000, () => {});
      refused.emit('finish');
      expect(holds.heldSockets).to.equal(1);
      closing.destroy();
      expect(holds.heldSockets).to.equal(0);
    });

    it('holds a connection a request was deferred on, and serves deferred requests at once for a drain', async () => {
      const holds = new SourceHolds(5_000, sourceOf);
      const socket = standIn('127.0.0.9');
      let served = 0;
      holds.defer(socket, 300, () => served++);
      expect(holds.heldFor(socket)).to.be.within(250, 300);
      await holds.releaseAll();
      expect([served, holds.heldSockets, socket.paused]).to.deep.equal([1, 0, false]);
      holds.refuse(responseOn(socket), 300, () => served++);
      expect([served, holds.heldSockets], 'nothing held once draining').to.deep.equal([2, 0]);
    });
  });
});
