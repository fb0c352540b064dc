/**
 * Calls from cluster workers to objects that the primary process hosts, over the cluster's IPC
 * channel. Advanced serialization (set by the primary) carries bigints as they are. A call the
 * primary does not answer within the timeout rejects, and the caller's local fallback answers.
 */
import cluster from 'node:cluster';

const CHANNEL = 'svc-ingress:call';
const TIMEOUT_MS = 1_000;

interface Call {
  readonly channel: typeof CHANNEL;
  readonly id: number;
  readonly service: string;
  /** Which hosted object: workers with the same options share one. */
  readonly key: string;
  /** What the primary builds the object from, the first time it sees `key`. */
  readonly init: unknown;
  readonly method: string;
  readonly args: unknown[];
}

interface Reply {
  readonly channel: typeof CHANNEL;
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

const isCall = (message: unknown): message is Call => (message as Call | null)?.channel === CHANNEL;

/** In the primary: answers workers' calls to `service` on the objects `build` makes. */
export function hostService(service: string, build: (init: unknown) => object): void {
  const hosted = new Map<string, Record<string, (...args: unknown[]) => unknown>>();
  cluster.on('message', (worker, message: unknown) => {
    if (!isCall(message) || message.service !== service) return;
    let target = hosted.get(message.key);
    if (target === undefined) {
      target = build(message.init) as Record<string, (...args: unknown[]) => unknown>;
      hosted.set(message.key, target);
    }
    const reply = (body: Omit<Reply, 'channel' | 'id'>) => {
      if (worker.isConnected()) worker.send({ channel: CHANNEL, id: message.id, ...body } satisfies Reply);
    };
    Promise.resolve()
      .then(() => target[message.method]!(...message.args))
      .then(
        (value) => reply({ value }),
        (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
      );
  });
}

const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
let nextId = 0;
let listening = false;

/** In a worker: `method(...args)` on the primary's `service` object for `key`. */
export function callPrimary(service: string, key: string, init: unknown, method: string, args: unknown[]): Promise<unknown> {
  if (!cluster.isWorker || process.send === undefined) return Promise.reject(new Error('not a cluster worker'));
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      const reply = message as Reply | null;
      if (reply?.channel !== CHANNEL) return;
      const waiter = pending.get(reply.id);
      if (waiter === undefined) return;
      pending.delete(reply.id);
      clearTimeout(waiter.timer);
      if (reply.error !== undefined) waiter.reject(new Error(reply.error));
      else waiter.resolve(reply.value);
    });
  }
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(Object.assign(new Error(`the primary did not answer ${service}.${method}`), { code: 'PRIMARY_TIMEOUT' }));
    }, TIMEOUT_MS);
    // The channel must not keep a draining worker alive.
    timer.unref();
    pending.set(id, { resolve, reject, timer });
    process.send!({ channel: CHANNEL, id, service, key, init, method, args } satisfies Call, undefined, undefined, (err) => {
      if (err === null) return;
      pending.delete(id);
      clearTimeout(timer);
      reject(err);
    });
  });
}
