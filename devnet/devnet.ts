/**
 * The embedded devnet: a real anvil as chain 8141 (60M gas blocks, FIFO ordering, mining off),
 * the consensus-node stand-in over it, and the ingress in front of both with the devnet config:
 * submissions go through the gate to the stand-in, which orders them into commits and closes
 * about one EL block per second while transactions wait. A development fixture, not a node.
 */
import { fileURLToPath } from 'node:url';
import { loadConfigFile, type IngressConfig } from '../src/config/load.js';
import { startIngress, type Ingress } from '../src/ingress.js';
import type { Logger } from '../src/log.js';
import { startAnvil, type Anvil } from './anvil.js';
import { startNodeStandIn, type NodeStandIn, type StandInOptions } from './node.js';

export const DEVNET_CONFIG = fileURLToPath(new URL('../../config/devnet.yaml', import.meta.url));

export interface Devnet {
  readonly anvil: Anvil;
  readonly node: NodeStandIn;
  readonly ingress: Ingress;
  stop(): Promise<void>;
}

export interface DevnetOptions {
  readonly port: number;
  /** Port of the operator listener; absent keeps the config's. */
  readonly metricsPort?: number;
  readonly node?: Omit<StandInOptions, 'elUrl'>;
  /** Adjusts the loaded devnet config (tests). */
  readonly configure?: (config: IngressConfig) => IngressConfig;
}

export async function startDevnet(options: DevnetOptions, log: Logger): Promise<Devnet> {
  const base = loadConfigFile(DEVNET_CONFIG);
  const anvil = await startAnvil({ extraArgs: ['--no-mining'] });
  let node: NodeStandIn | undefined;
  try {
    node = await startNodeStandIn({ elUrl: anvil.url, ...options.node });
    const upstreams = base.upstreams;
    let config: IngressConfig = {
      ...base,
      listen: { host: '127.0.0.1', port: options.port },
      metricsListen: base.metricsListen && { host: '127.0.0.1', port: options.metricsPort ?? base.metricsListen.port },
      upstreams: {
        execution: { ...upstreams.execution, url: anvil.url },
        submit: { ...upstreams.submit, url: node.url },
        node: upstreams.node && { ...upstreams.node, url: node.url },
      },
    };
    config = options.configure?.(config) ?? config;
    const ingress = await startIngress(config, log);
    const running = node;
    return {
      anvil,
      node: running,
      ingress,
      async stop() {
        await ingress.shutdown();
        await running.stop();
        await anvil.stop();
      },
    };
  } catch (err) {
    await node?.stop();
    await anvil.stop();
    throw err;
  }
}
