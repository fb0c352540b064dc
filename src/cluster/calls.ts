/**
 * Calls from cluster workers to objects that the primary process hosts, over the cluster's IPC
 * channel. Advanced serialization (set by the primary) carries bigints as they are. A call the
 * primary does not answer within the timeout rejects, and the caller's local fallback answers.
 *
 * Calls made in one turn of a worker's event loop travel as one message and come back as one:
 * a message costs the primary ~30 µs whatever it carries, which capped a host at ~33,000
 * rate-limited requests a second when every call was its own message.
 */
import cluster, { type Worker } from 'node:cluster';

const CHANNEL = 'svc-ingress:call';
const TIMEOUT_MS = 1_000;

interface Call {
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
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

/** What crosses the channel, either way: a batch. */
interface Batch<T> {
  readonly channel: typeof CHANNEL;
  readonly items: readonly T[];
}

const isBatch = <T>(message: unknown): message is Batch<T> => (message as Batch<T> | null)?.channel === CHANNEL;

type Hosted = Record<string, (...args: unknown[]) => unknown>;
const services = new Map<string, { build: (init: unknown) => object; objects: Map<string, Hosted> }>();

/** In the primary: answers workers' calls to `service` on the objects `build` makes. */
export function hostService(service: string, build: (init: unknown) => object): void {
  if (services.size === 0) cluster.on('message', answerBatch);
  services.set(service, { build, objects: new Map() });
}

function answerBatch(worker: Worker, message: unknown): void {
  if (!isBatch<Call>(message)) return;
  const replies = message.items.map(async (call): Promise<Reply> => {
    try {
      const service = services.get(call.service);
      if (service === undefined) throw new Error(`no service ${call.service}`);
      let target = service.objects.get(call.key);
      if (target === undefined) {
        target = service.build(call.init) as Hosted;
        service.objects.set(call.key, target);
      }
      return { id: call.id, value: await target[call.method]!(...call.args) };
    } catch (err) {
      return { id: call.id, error: err instanceof Error ? err.message : String(err) };
    }
  });
  void Promise.all(replies).then((items) => {
    // A worker that died meanwhile reads nothing: with a callback, its broken pipe (EPIPE) is
    // handed there instead of emitted as an 'error' that would end the primary.
    if (worker.isConnected()) worker.send({ channel: CHANNEL, items } satisfies Batch<Reply>, () => {});
  });
}

const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
let nextId = 0;
let listening = false;
let outbox: Call[] = [];

function flush(): void {
  const items = outbox;
  outbox = [];
  process.send!({ channel: CHANNEL, items } satisfies Batch<Call>, undefined, undefined, (err) => {
    if (err === null) return;
    for (const { id } of items) settle(id, (waiter) => waiter.reject(err));
  });
}

function settle(id: number, how: (waiter: { resolve(value: unknown): void; reject(err: Error): void }) => void): void {
  const waiter = pending.get(id);
  if (waiter === undefined) return;
  pending.delete(id);
  clearTimeout(waiter.timer);
  how(waiter);
}

/** In a worker: `method(...args)` on the primary's `service` object for `key`. */
export function callPrimary(service: string, key: string, init: unknown, method: string, args: unknown[]): Promise<unknown> {
  if (!cluster.isWorker || process.send === undefined) return Promise.reject(new Error('not a cluster worker'));
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      if (!isBatch<Reply>(message)) return;
      for (const reply of message.items) {
        settle(reply.id, (waiter) => (reply.error !== undefined ? waiter.reject(new Error(reply.error)) : waiter.resolve(reply.value)));
      }
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
    if (outbox.push({ id, service, key, init, method, args }) === 1) setImmediate(flush);
  });
}
