import { deserialize, serialize } from 'node:v8';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { PaymasterTurns, type SlotTurns, WAITING_HEADS } from '../../../../plugins/gate/ledger/paymaster-turns.js';
import { PrimaryTurns, RedisTurns, sharedTurns } from '../../../../plugins/gate/ledger/paymaster-turns-shared.js';
import { Fleet } from '../../../../src/fleet.js';
import { createLogger } from '../../../../src/log.js';
import type { PrimaryCall } from '../../../../src/plugin.js';
import { startRedis, type RedisServer } from '../../../helpers/redis.js';

const PAYMASTER = '0x00000000000000000000000000000000000f00d5';

describe("gate: turns at a paymaster's one pending slot, where the ledger is (paymaster-turns-shared.ts)", () => {
  let server: RedisServer;
  let redis: Redis;
  before(async () => {
    server = await startRedis();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  after(async () => {
    await redis?.quit();
    await server?.stop();
  });

  /** The same turns three ways: this process, Redis, the primary (its answers copied as IPC copies them). */
  const homes: ReadonlyArray<{ name: string; open(): Promise<() => SlotTurns> }> = [
    {
      name: 'one process',
      open: async () => {
        const local = new PaymasterTurns();
        return () => sharedTurns(new Fleet({ store: 'memory', redisUrl: undefined }, createLogger('error')), local);
      },
    },
    {
      name: 'Redis',
      open: async () => {
        await redis.flushdb();
        return () => new RedisTurns(redis);
      },
    },
    {
      name: 'the primary',
      open: async () => {
        const copy = <T>(value: T): T => deserialize(serialize(value)) as T;
        const hosted = new PaymasterTurns();
        const call: PrimaryCall = async (service, _key, _init, method, args) => {
          expect(service).to.equal('gate-turns');
          return copy(await (hosted as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...copy(args)));
        };
        return () => new PrimaryTurns(call);
      },
    },
  ];

  for (const home of homes) {
    describe(home.name, () => {
      it('makes the last holder yield while another source waits, for WAITING_HEADS heads', async () => {
        const turns = (await home.open())();
        expect(await turns.yields(PAYMASTER, 'a', 100n), 'nobody held it').to.equal(false);
        await turns.took(PAYMASTER, 'a');
        expect(await turns.yields(PAYMASTER, 'a', 100n), 'held, nobody waits').to.equal(false);
        await turns.waited(PAYMASTER, 'a', 100n);
        expect(await turns.yields(PAYMASTER, 'a', 101n), 'only itself waited').to.equal(false);
        await turns.waited(PAYMASTER, 'v', 100n);
        expect(await turns.yields(PAYMASTER, 'a', 100n + WAITING_HEADS), 'another waits').to.equal(true);
        expect(await turns.yields(PAYMASTER, 'v', 101n), 'the one waiting').to.equal(false);
        expect(await turns.yields(PAYMASTER, 'a', 101n + WAITING_HEADS), 'the other stopped waiting').to.equal(false);
      });

      it('hands the turn on: whoever takes the slot stops waiting and becomes the one to yield', async () => {
        const turns = (await home.open())();
        await turns.took(PAYMASTER, 'a');
        await turns.waited(PAYMASTER, 'v', 100n);
        await turns.took(PAYMASTER, 'v');
        await turns.waited(PAYMASTER, 'a', 101n);
        expect(await turns.yields(PAYMASTER, 'v', 102n)).to.equal(true);
        expect(await turns.yields(PAYMASTER, 'a', 102n)).to.equal(false);
        expect(await turns.yields('0x00000000000000000000000000000000000f00d6', 'v', 102n), 'another paymaster').to.equal(false);
      });

      it('shares them between instances: a holder on one yields to a source refused on another', async () => {
        const open = await home.open();
        const [one, other] = [open(), open()];
        await one.took(PAYMASTER, 'poller');
        await other.waited(PAYMASTER, 'user', 100n);
        expect(await one.yields(PAYMASTER, 'poller', 101n)).to.equal(true);
        await other.took(PAYMASTER, 'user');
        expect(await one.yields(PAYMASTER, 'poller', 101n), 'no longer the holder').to.equal(false);
      });
    });
  }

  it('Redis: forgets the source waiting longest past 1,000 waiting for one paymaster', async () => {
    await redis.flushdb();
    const turns = new RedisTurns(redis);
    await turns.took(PAYMASTER, 'holder');
    for (let i = 0; i < 1_001; i++) await turns.waited(PAYMASTER, `s${i}`, BigInt(1_000 + i));
    const fields = await redis.hkeys(`svc-ingress:gate:turns:${PAYMASTER}`);
    expect(fields.length).to.equal(1_001);
    expect(fields).to.not.include('w:s0');
    expect(fields).to.include.members(['holder', 'w:s1', 'w:s1000']);
    expect(await redis.pttl(`svc-ingress:gate:turns:${PAYMASTER}`)).to.be.within(1, 600_000);
  });
});
