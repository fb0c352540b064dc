/**
 * `npm start`: the embedded devnet (devnet.ts) with the ingress on 127.0.0.1:$PORT (default
 * 8545) and its operator listener on $METRICS_PORT (default 9645). Ctrl-C stops everything.
 */
import { randomBytes } from 'node:crypto';
import { createLogger } from '../src/log.js';
import { CHAIN_ID } from './anvil.js';
import { startDevnet } from './devnet.js';

function portFrom(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a port number, not ${process.env[name]}`);
  return value;
}

function blocksFrom(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a number of blocks, not ${process.env[name]}`);
  return value;
}

async function main(): Promise<void> {
  const port = portFrom('PORT', 8545);
  const metricsPort = portFrom('METRICS_PORT', 9645);
  const generatedToken = process.env.SVC_OPERATOR_TOKEN === undefined;
  if (generatedToken) process.env.SVC_OPERATOR_TOKEN = randomBytes(24).toString('hex');
  const log = createLogger('info');
  const witnessWindowBlocks = blocksFrom('WITNESS_WINDOW_BLOCKS', 128);
  const devnet = await startDevnet({ port, metricsPort, witnessWindowBlocks }, log);
  process.stdout.write(
    `svc-ingress devnet (chain ${CHAIN_ID}) ready at ${devnet.ingress.url}\n` +
      `  EL: anvil at ${devnet.anvil.url}, behind the devnet's EL front at ${devnet.el.url}\n` +
      `    (svc_historyStatus; 4444 for block-scoped reads more than ${witnessWindowBlocks} blocks back: WITNESS_WINDOW_BLOCKS)\n` +
      `  consensus-node stand-in at ${devnet.node.url}\n` +
      `  metrics and probes: ${devnet.ingress.metricsUrl}/metrics, /livez, /readyz\n` +
      "  funded accounts: anvil's well-known development keys\n" +
      (generatedToken
        ? `  operator token (svc_nodeHealth, Authorization: Bearer): ${process.env.SVC_OPERATOR_TOKEN}\n` +
          '    generated for this run; set SVC_OPERATOR_TOKEN before npm start to choose one\n'
        : '') +
      '  Ctrl-C stops everything.\n',
  );
  devnet.anvil.child.once('exit', () => {
    log.error('anvil exited: stopping the devnet');
    void devnet.stop().then(() => process.exit(1));
  });
  const stop = async () => {
    process.stdout.write('stopping devnet\n');
    devnet.anvil.child.removeAllListeners('exit');
    await devnet.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`devnet: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
