import { expect } from 'chai';
import { Chain, type ChainEntry } from '../../src/chain.js';
import { CLOSED, Facts } from '../../src/facts.js';
import { RequestTab } from '../../src/request-tab.js';
import { createLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import type { Plugin, PluginEnv, PluginModule, RequestContext } from '../../src/plugin.js';
import { Upstream } from '../../src/upstream.js';
import { pluginEnv } from '../helpers/plugin-env.js';

/** A plugin that records what happens to it and answers for one method. */
function recorder(
  name: string,
  events: string[],
  behaviour: { answers?: string; async?: boolean; failCreate?: boolean; methods?: readonly string[] } = {},
): ChainEntry {
  const module: PluginModule<void> = {
    name,
    parseOptions: () => undefined,
    create() {
      if (behaviour.failCreate) throw new Error(`${name} cannot start`);
      events.push(`create ${name}`);
      const plugin: Plugin = {
        name,
        ...(behaviour.methods === undefined ? {} : { methods: new Set(behaviour.methods) }),
        handle({ request }: RequestContext) {
          events.push(`${name} ${request.method}`);
          const verdict = request.method === behaviour.answers ? { result: name } : undefined;
          return behaviour.async ? Promise.resolve(verdict) : verdict;
        },
        close() {
          events.push(`close ${name}`);
        },
      };
      return plugin;
    },
  };
  return { module, options: undefined };
}

const log = createLogger('error');
/** Made for each run of the suite: closed after it. */
let upstream: Upstream;
let env: PluginEnv;
const ctx = (method: string): RequestContext => ({
  request: Object.freeze({ jsonrpc: '2.0' as const, id: 1, method }),
  peer: { address: '127.0.0.1', headers: {} },
  facts: new Facts(),
  tab: new RequestTab(),
});

describe('chain', () => {
  before(() => {
    upstream = new Upstream({ url: 'http://127.0.0.1:1', connections: 1, headersTimeoutMs: 100, bodyTimeoutMs: 100 });
    env = { ...pluginEnv(upstream, log), node: undefined };
  });
  after(() => upstream.close());

  it("names a connection's source by the first plugin that has connectionSource, or not at all", async () => {
    const sourcing = (name: string, source: string | null) => ({
      module: { name, parseOptions: () => undefined, create: () => ({ name, connectionSource: () => source }) },
      options: undefined,
    });
    const none = await Chain.create([recorder('a', [])], env);
    expect(none.connectionSource('192.0.2.1')).to.equal(undefined);
    const first = await Chain.create([recorder('a', []), sourcing('b', null), sourcing('c', 'site')], env);
    expect(first.connectionSource('192.0.2.1')).to.equal(null);
  });

  it('runs plugins in list order and stops at the first answer', async () => {
    const events: string[] = [];
    const chain = await Chain.create([recorder('a', events), recorder('b', events, { answers: 'm' }), recorder('c', events)], env);
    expect(chain.run(ctx('m'))).to.deep.equal({ result: 'b' });
    expect(events).to.deep.equal(['create a', 'create b', 'create c', 'a m', 'b m']);
  });

  it('passes (undefined) when every plugin passes', async () => {
    const events: string[] = [];
    const chain = await Chain.create([recorder('a', events), recorder('b', events)], env);
    expect(chain.run(ctx('x'))).to.equal(undefined);
    expect(events.slice(2)).to.deep.equal(['a x', 'b x']);
  });

  it('continues after an asynchronous pass and keeps the order', async () => {
    const events: string[] = [];
    const chain = await Chain.create(
      [recorder('a', events, { async: true }), recorder('b', events), recorder('c', events, { answers: 'm', async: true })],
      env,
    );
    expect(await chain.run(ctx('m'))).to.deep.equal({ result: 'c' });
    expect(events.slice(3)).to.deep.equal(['a m', 'b m', 'c m']);
  });

  it('calls a plugin that names its methods for those methods only, in list order', async () => {
    const events: string[] = [];
    const chain = await Chain.create(
      [
        recorder('a', events),
        recorder('b', events, { methods: ['m', 'n'] }),
        recorder('c', events, { answers: 'm', async: true, methods: ['m'] }),
      ],
      env,
    );
    expect(chain.run(ctx('x'))).to.equal(undefined);
    expect(chain.run(ctx('n'))).to.equal(undefined);
    expect(await chain.run(ctx('m'))).to.deep.equal({ result: 'c' });
    // "constructor" and "__proto__" are methods like any other, not keys of an object.
    expect(chain.run(ctx('constructor'))).to.equal(undefined);
    expect(events.slice(3)).to.deep.equal(['a x', 'a n', 'b n', 'a m', 'b m', 'c m', 'a constructor']);
  });

  it('closes the plugins already created, last first, when a later create fails', async () => {
    const events: string[] = [];
    const entries = [recorder('a', events), recorder('b', events), recorder('c', events, { failCreate: true })];
    let failure: Error | undefined;
    await Chain.create(entries, env).catch((err: Error) => (failure = err));
    expect(failure?.message).to.equal('c cannot start');
    expect(events).to.deep.equal(['create a', 'create b', 'close b', 'close a']);
  });

  it('closes each plugin once however often close() is called', async () => {
    const events: string[] = [];
    const chain = await Chain.create([recorder('a', events)], env);
    await Promise.all([chain.close(), chain.close()]);
    await chain.close();
    expect(events).to.deep.equal(['create a', 'close a']);
  });

  it("counts an error answer as its plugin's refusal, but not one given to a client who has left", async () => {
    const refusing: ChainEntry = {
      module: {
        name: 'refusing',
        parseOptions: () => undefined,
        create: () => ({ name: 'refusing', handle: async () => ({ error: { code: -32603, message: 'not forwarded' } }) }),
      },
      options: undefined,
    };
    const metrics = new Metrics();
    const chain = await Chain.create([refusing], env, metrics);
    const present = ctx('eth_sendRawTransaction');
    const gone = ctx('eth_sendRawTransaction');
    gone.facts.set(CLOSED, true);
    await chain.run(present);
    await chain.run(gone);
    const text = await metrics.registry.metrics();
    expect(text).to.include('svc_ingress_refusals_total{plugin="refusing",code="-32603"} 1\n');
    await chain.close();
  });

  it('freezes facts once set', () => {
    const facts = new Facts();
    const fact = { name: 'f' };
    facts.set(fact, true);
    expect(() => facts.set(fact, false)).to.throw('fact "f" is already set');
    expect(facts.get(fact)).to.equal(true);
  });
});
