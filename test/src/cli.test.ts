import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { cliNodeFlags, followIngress, runCli, startIngressProcess, writeConfig, type IngressProcess } from '../../support/child.js';
import { post, rpc } from '../../support/http.js';
import { startStubEl, type StubEl } from '../../support/stub-el.js';
import { useAnvil } from '../helpers/el.js';
import { OPERATOR_TOKEN, testConfig } from '../helpers/ingress.js';

async function outputOf(args: string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = runCli(args);
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr, stdout };
}

describe('svc-ingress command', () => {
  const anvil = useAnvil();

  /** The one JSON log line a start-up failure writes, its time checked and left out. */
  const lineOf = (stderr: string) => {
    expect(stderr.endsWith('\n') && stderr.indexOf('\n') === stderr.length - 1, `one line: ${stderr}`).to.equal(true);
    const { time, ...rest } = JSON.parse(stderr) as { time: string };
    expect(Date.parse(time)).to.be.closeTo(Date.now(), 60_000);
    return rest;
  };

  it('logs its usage (JSON, as every other line) and exits 2 without --config', async () => {
    const { code, stderr, stdout } = await outputOf([]);
    expect(code).to.equal(2);
    expect(lineOf(stderr)).to.deep.equal({ level: 'error', msg: 'usage: svc-ingress --config FILE', reason: 'no --config given' });
    expect(stdout).to.equal('');
    expect((await outputOf(['--help'])).stdout, '--help').to.equal('usage: svc-ingress --config FILE\n');
  });

  it('refuses an invalid file at start in a JSON line naming the YAML path, and exits 2', async () => {
    const path = writeConfig(
      'listen: 127.0.0.1:0\nupstreams:\n  execution: http://127.0.0.1:1\nplugins:\n  - size-limit:\n      max_body_bytes: nope\n',
    );
    const { code, stderr } = await outputOf(['--config', path]);
    expect(code).to.equal(2);
    expect(lineOf(stderr)).to.deep.equal({
      level: 'error',
      msg: 'invalid configuration',
      path,
      reason: 'plugins[0].size-limit.max_body_bytes: must be a positive integer',
    });
  });

  it('logs a failure to start (the port taken) in a JSON line and exits 1', async () => {
    const taken = await startIngressProcess(testConfig(anvil.current.url).replace('log_level: debug', 'log_level: info'));
    try {
      const path = writeConfig(testConfig(anvil.current.url).replace('listen: 127.0.0.1:0', `listen: ${new URL(taken.url).host}`));
      const { code, stderr } = await outputOf(['--config', path]);
      expect(code).to.equal(1);
      const line = JSON.parse(stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
      expect(line).to.include({ level: 'error', msg: 'failed to start' });
      expect(String(line.error)).to.match(/EADDRINUSE/);
    } finally {
      taken.child.kill('SIGTERM');
      await taken.exited;
    }
  });

  it('runs, when executed as the installed command, with the node flags of its first line, in every worker too', async function () {
    this.timeout(20_000);
    const flags = cliNodeFlags();
    expect(flags).to.deep.equal(['--max-semi-space-size=32']);
    // npm makes a package's bin executable when it installs it; the build does not.
    chmodSync('dist/src/cli.js', 0o755);
    const path = writeConfig(`${testConfig(anvil.current.url).replace('log_level: debug', 'log_level: info')}workers: 2\n`);
    const ingress = await followIngress(spawn('dist/src/cli.js', ['--config', path], { stdio: ['ignore', 'pipe', 'pipe'] }), path);
    try {
      const workers = (await ingress.waitForLogs('worker listening', 2)).map((entry) => Number(entry.pid));
      const argv = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      for (const pid of [ingress.child.pid!, ...workers]) expect(argv(pid), `process ${pid}`).to.include.members(flags);
    } finally {
      ingress.child.kill('SIGTERM');
      expect(await ingress.exited).to.equal(0);
    }
  });

  describe('signals', () => {
    let ingress: IngressProcess;

    beforeEach(async () => {
      ingress = await startIngressProcess(testConfig(anvil.current.url).replace('log_level: debug', 'log_level: info'));
    });
    afterEach(async () => {
      if (ingress.child.exitCode === null) ingress.child.kill('SIGKILL');
      await ingress.exited;
    });

    it('serves reads from the file it was given', async () => {
      const reply = await rpc(ingress.url, 'eth_chainId');
      expect(reply.text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
    });

    it('reloads the file on SIGHUP', async () => {
      expect(JSON.parse((await rpc(ingress.url, 'ots_getApiLevel')).text).error.code).to.equal(-32601);
      writeFileSync(ingress.configPath, testConfig(anvil.current.url, '\n  - allowlist:\n      extra_methods: [ots_getApiLevel]'));
      ingress.child.kill('SIGHUP');
      await ingress.waitForLog('configuration reloaded');
      expect(JSON.parse((await rpc(ingress.url, 'ots_getApiLevel')).text)).to.have.property('result');
    });

    it('keeps the running chain when the reloaded file is invalid, and says why', async () => {
      writeFileSync(ingress.configPath, testConfig(anvil.current.url, '\n  - allowlist:\n      extra_methodz: []'));
      ingress.child.kill('SIGHUP');
      const entry = await ingress.waitForLog('reload refused: keeping the running configuration');
      expect(entry.reason).to.equal('plugins[0].allowlist.extra_methodz: unknown key');
      // Still the old chain: the operator method is still guarded, eth_chainId still served.
      expect((await rpc(ingress.url, 'eth_chainId')).text).to.equal('{"jsonrpc":"2.0","id":1,"result":"0x1fcd"}');
      expect(JSON.parse((await rpc(ingress.url, 'eth_maxPriorityFeePerGas')).text).result).to.equal('0x0');
    });

    it('never logs the operator token', async () => {
      await rpc(ingress.url, 'svc_nodeHealth', [], 1, { authorization: `Bearer ${OPERATOR_TOKEN}` });
      ingress.child.kill('SIGHUP');
      await ingress.waitForLog('configuration reloaded');
      ingress.child.kill('SIGTERM');
      await ingress.exited;
      expect(ingress.lines.length).to.be.greaterThan(2);
      expect(ingress.lines.join('\n')).to.not.include(OPERATOR_TOKEN);
    });
  });

  describe('SIGTERM', () => {
    let slow: StubEl | undefined;
    after(() => slow?.close());

    it('stops accepting, lets the request in flight finish, then exits 0', async () => {
      // An EL that holds its answer until the test releases it.
      let release!: (answer: string) => void;
      let arrive!: () => void;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      slow = await startStubEl({
        eth_blockNumber: () => {
          arrive();
          return new Promise<string>((resolve) => (release = resolve));
        },
      });
      const ingress = await startIngressProcess(testConfig(slow.url).replace('headers_timeout_ms: 2000', 'headers_timeout_ms: 20000'));
      const inFlight = rpc(ingress.url, 'eth_blockNumber', [], 77);
      await arrived;
      ingress.child.kill('SIGTERM');
      await ingress.waitForLog('stopping: draining in-flight requests');
      const refused = await post(ingress.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}').then(
        () => 'answered',
        (err: Error & { code?: string }) => err.code ?? err.message,
      );
      // Refused, or reset if it raced into the backlog as the listening socket closed.
      expect(['ECONNREFUSED', 'ECONNRESET']).to.include(refused);
      release('{"jsonrpc":"2.0","id":77,"result":"0x2a"}');
      expect((await inFlight).text).to.equal('{"jsonrpc":"2.0","id":77,"result":"0x2a"}');
      expect(await ingress.exited).to.equal(0);
    });
  });
});
