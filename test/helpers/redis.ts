/** A real redis-server (Debian package) on a free loopback port, for fleet-mode tests; or a primary, a replica and three Sentinels. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../support/ports.js';
import { scratchDir } from '../../support/scratch.js';

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: it keeps nothing on disk). */
  restart(): Promise<void>;
}

/** A fresh directory for a server's files (a primary writes an RDB file to sync a replica, whatever `--save` says). */
const scratch = () => scratchDir('svc-redis');
const serverArgs = (port: number) => [
  '--port',
  String(port),
  '--bind',
  '127.0.0.1',
  '--save',
  '',
  '--appendonly',
  'no',
  '--dir',
  scratch(),
];

function launch(port: number, args: readonly string[] = serverArgs(port)): Promise<ChildProcess> {
  const child = spawn('redis-server', [...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`redis-server cannot run (is the Debian package installed?): ${err.message}`));
    });
    child.stdout!.on('data', function onData(chunk: Buffer) {
      output += chunk.toString();
      if (!output.includes('Ready to accept connections') && !output.includes('Sentinel ID is')) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData).resume();
      resolve(child);
    });
    child.stderr!.resume();
  });
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let child = await launch(port);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    async restart() {
      await stop();
      child = await launch(port);
    },
  };
}

const MASTER = 'mymaster';

export interface SentinelSet {
  /** The Sentinels' addresses, host:port, for `redis.sentinels`. */
  readonly sentinels: readonly string[];
  readonly name: string;
  readonly primaryPort: number;
  readonly replicaPort: number;
  /** The port the Sentinels name as the master now. */
  masterPort(): Promise<number>;
  /** Waits until the primary's writes so far are on the replica (WAIT 1). */
  replicated(): Promise<void>;
  killPrimary(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A primary, its replica and three Sentinels (quorum 2, a master down after 300 ms), on loopback.
 * With `password`, the servers and the Sentinels alike ask for it.
 */
export async function startSentinelSet(password?: string): Promise<SentinelSet> {
  const dir = scratch();
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const children: ChildProcess[] = [];
  const auth = password === undefined ? [] : ['--requirepass', password, '--masterauth', password];
  const primary = await launch(primaryPort, [...serverArgs(primaryPort), ...auth]);
  children.push(primary, await launch(replicaPort, [...serverArgs(replicaPort), ...auth, '--replicaof', '127.0.0.1', String(primaryPort)]));
  const client = (port: number) =>
    new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, ...(password === undefined ? {} : { password }) });
  const replica = client(replicaPort);
  for (const deadline = Date.now() + 10_000; !(await replica.info('replication')).includes('master_link_status:up'); ) {
    if (Date.now() > deadline) throw new Error('the replica never synced');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  replica.disconnect();
  const sentinels: string[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const conf = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 2`,
        `sentinel down-after-milliseconds ${MASTER} 300`,
        `sentinel failover-timeout ${MASTER} 1000`,
        `sentinel parallel-syncs ${MASTER} 1`,
        ...(password === undefined ? [] : [`sentinel auth-pass ${MASTER} ${password}`, `requirepass ${password}`]),
        '',
      ].join('\n'),
    );
    children.push(await launch(port, [conf, '--sentinel']));
    sentinels.push(`127.0.0.1:${port}`);
  }
  const kill = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  return {
    sentinels,
    name: MASTER,
    primaryPort,
    replicaPort,
    async masterPort() {
      const sentinel = client(Number(sentinels[0]!.split(':')[1]));
      try {
        const [, port] = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', MASTER)) as [string, string];
        return Number(port);
      } finally {
        sentinel.disconnect();
      }
    },
    async replicated() {
      const writer = client(primaryPort);
      try {
        await writer.call('WAIT', '1', '5000');
      } finally {
        writer.disconnect();
      }
    },
    killPrimary: () => kill(primary),
    async stop() {
      for (const child of children.reverse()) await kill(child);
    },
  };
}
