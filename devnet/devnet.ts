/**
 * The embedded devnet: a real anvil as chain 8141 (60M gas blocks, FIFO ordering, mining off),
 * the consensus-node stand-in over it, and the ingress in front of both with the devnet config:
 * submissions go through the gate to the stand-in, which orders them into commits and closes
 * about one EL block per second while transactions wait; frame transactions run in the
 * execution stand-in (frames/frame-chain.ts). Multicall3 is at its canonical address, as a
 * predeploy (multicall3.ts). A development fixture, not a node.
 */
import { fileURLToPath } from 'node:url';
import { loadConfigFile, type IngressConfig } from '../src/config/load.js';
import { startIngress, type Ingress } from '../src/ingress.js';
import type { Logger } from '../src/log.js';
import { startAnvil, type Anvil } from './anvil.js';
import { startElFront, type ElFront } from './el-front.js';
import { FrameChain } from './frames/frame-chain.js';
import { placeMulticall3 } from './multicall3.js';
import { startNodeStandIn, type NodeStandIn, type StandInOptions } from './node.js';

const DEFAULT_WITNESS_WINDOW_BLOCKS = 128;

export const DEVNET_CONFIG = fileURLToPath(new URL('../../config/devnet.yaml', import.meta.url));

export interface Devnet {
  readonly anvil: Anvil;
  /** The ingress's EL: anvil behind the front that answers what the chain's own EL adds. */
  readonly el: ElFront;
  readonly node: NodeStandIn;
  readonly ingress: Ingress;
  stop(): Promise<void>;
}

export interface DevnetOptions {
  readonly port: number;
  /** Port of the operator listener; absent keeps the config's. */
  readonly metricsPort?: number;
  readonly node?: Omit<StandInOptions, 'elUrl'>;
  /** Blocks with full bodies on the EL front (4444 below them); default 128. */
  readonly witnessWindowBlocks?: number;
  /** Adjusts the loaded devnet config (tests). */
  readonly configure?: (config: IngressConfig) => IngressConfig;
}

export async function startDevnet(options: DevnetOptions, log: Logger): Promise<Devnet> {
  const base = loadConfigFile(DEVNET_CONFIG);
  const anvil = await startAnvil({ extraArgs: ['--no-mining'] });
  const frames = new FrameChain(anvil.url);
  let node: NodeStandIn | undefined;
  let el: ElFront | undefined;
  try {
    await placeMulticall3(anvil.url);
    el = await startElFront({
      anvilUrl: anvil.url,
      witnessWindowBlocks: options.witnessWindowBlocks ?? DEFAULT_WITNESS_WINDOW_BLOCKS,
      frames,
    });
    node = await startNodeStandIn({ elUrl: anvil.url, frames, ...options.node });
    const upstreams = base.upstreams;
    let config: IngressConfig = {
      ...base,
      listen: { host: '127.0.0.1', port: options.port },
      metricsListen: base.metricsListen && { host: '127.0.0.1', port: options.metricsPort ?? base.metricsListen.port },
      upstreams: {
        execution: { ...upstreams.execution, url: el.url },
        submit: { ...upstreams.submit, url: node.url },
        heavy: { ...upstreams.heavy, url: el.url },
        quick: { ...upstreams.quick, url: el.url },
        quickCall: upstreams.quickCall,
        maxCallMs: upstreams.maxCallMs,
        node: upstreams.node && { ...upstreams.node, url: node.url },
      },
    };
    config = options.configure?.(config) ?? config;
    const ingress = await startIngress(config, log);
    const running = node;
    const front = el;
    return {
      anvil,
      el: front,
      node: running,
      ingress,
      async stop() {
        await ingress.shutdown();
        await running.stop();
        await front.close();
        await anvil.stop();
      },
    };
  } catch (err) {
    await node?.stop();
    await el?.close();
    await anvil.stop();
    throw err;
  }
}
