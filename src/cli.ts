#!/usr/bin/env node
/**
 * `svc-ingress --config FILE`: runs the ingress from a YAML file.
 * SIGHUP reloads the file (an invalid file keeps the running chain and logs why); SIGTERM and
 * SIGINT stop accepting, drain in-flight requests, then exit.
 */
import { parseArgs } from 'node:util';
import { loadConfigFile } from './config/load.js';
import { ConfigError } from './config/reader.js';
import { startIngress, type Ingress } from './ingress.js';
import { createLogger, describeError } from './log.js';

const USAGE = 'usage: svc-ingress --config FILE';

async function main(): Promise<number> {
  let configPath: string | undefined;
  try {
    const { values } = parseArgs({ options: { config: { type: 'string' }, help: { type: 'boolean' } } });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    configPath = values.config;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (configPath === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const path = configPath;
  let config;
  try {
    config = loadConfigFile(path);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`svc-ingress: invalid configuration: ${err.message}\n`);
    return 2;
  }
  const log = createLogger(config.logLevel);
  // Signal handlers go in before anything is announced: a SIGHUP that arrives before Node has a
  // listener for it takes the default action and kills the process.
  let ingress: Ingress | undefined;
  let stopRequested: ((signal: string) => void) | undefined;
  const stopped = new Promise<string>((resolve) => (stopRequested = resolve));
  process.on('SIGHUP', () => {
    if (ingress === undefined) return log.warn('reload ignored: still starting');
    let next;
    try {
      next = loadConfigFile(path);
    } catch (err) {
      log.error('reload refused: keeping the running configuration', { reason: (err as Error).message });
      return;
    }
    ingress.reload(next).catch((err) => log.error('reload failed: keeping the running configuration', describeError(err)));
  });
  process.once('SIGTERM', () => stopRequested!('SIGTERM'));
  process.once('SIGINT', () => stopRequested!('SIGINT'));

  ingress = await startIngress(config, log);
  log.info('listening', { url: ingress.url, plugins: config.plugins.map((p) => p.module.name) });
  const signal = await stopped;
  log.info('stopping: draining in-flight requests', { signal });
  try {
    await ingress.shutdown();
    return 0;
  } catch (err) {
    log.error('shutdown failed', describeError(err));
    return 1;
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`svc-ingress: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
