/** The environment `create()` receives, built as the runtime builds it, around one upstream. */
import { CarryOver } from '../../src/carry-over.js';
import { Fleet } from '../../src/fleet.js';
import type { Logger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import type { PluginEnv } from '../../src/plugin.js';
import { Upstream } from '../../src/upstream.js';

export function pluginEnv(upstream: Upstream, log: Logger, metrics = new Metrics()): PluginEnv {
  return {
    execution: upstream,
    stateReads: upstream,
    submit: upstream,
    node: upstream,
    relayTo: (url, longestWaitMs = 0) =>
      new Upstream({ ...upstream.options, url, isIngress: true, headersTimeoutMs: upstream.options.headersTimeoutMs + longestWaitMs }),
    log,
    shared: new Fleet({ store: 'memory', redisUrl: undefined }, log),
    metrics,
    carried: new CarryOver(),
  };
}
