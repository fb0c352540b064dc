/**
 * `npm start`: the embedded devnet. A real anvil as chain 8141 (60M gas blocks, FIFO ordering,
 * one block per second) with the ingress in front of it on 127.0.0.1:$PORT (default 8545).
 * Ctrl-C stops both. A development fixture, not a node.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../src/config/load.js';
import { startIngress } from '../src/ingress.js';
import { createLogger } from '../src/log.js';
import { startAnvil } from './anvil.js';

const CONFIG = fileURLToPath(new URL('../../config/devnet.yaml', import.meta.url));

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 8545);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, not ${process.env.PORT}`);
  const generatedToken = process.env.SVC_OPERATOR_TOKEN === undefined;
  if (generatedToken) process.env.SVC_OPERATOR_TOKEN = randomBytes(24).toString('hex');

  const anvil = await startAnvil({ blockTimeSeconds: 1 });
  const base = loadConfigFile(CONFIG);
  const execution = { ...base.upstreams.execution, url: anvil.url };
  const config = {
    ...base,
    listen: { host: '127.0.0.1', port },
    upstreams: { execution, submit: { ...base.upstreams.submit, url: anvil.url } },
  };
  const log = createLogger(config.logLevel);
  let ingress;
  try {
    ingress = await startIngress(config, log);
  } catch (err) {
    await anvil.stop();
    throw err;
  }
  process.stdout.write(
    `svc-ingress devnet (chain 8141) ready at ${ingress.url}\n` +
      `  EL: anvil at ${anvil.url} (one block per second); funded dev keys: see anvil's defaults\n` +
      (generatedToken ? '  svc_nodeHealth needs SVC_OPERATOR_TOKEN: set it before npm start to choose one\n' : '') +
      '  Ctrl-C stops both.\n',
  );
  anvil.child.once('exit', () => {
    log.error('anvil exited: stopping the devnet');
    void ingress.shutdown().then(() => process.exit(1));
  });
  const stop = async () => {
    process.stdout.write('stopping devnet\n');
    anvil.child.removeAllListeners('exit');
    await ingress.shutdown();
    await anvil.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`devnet: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
