// `npm run test:unit`: the suites that start no process (no anvil, redis-server, promtool,
// systemd-analyze, ingress child or devnet), found by what their compiled files call. Under a
// minute; `npm test` runs everything. A suite whose helper starts a process is named by the
// helper it calls.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const STARTS_A_PROCESS =
  /\b(useAnvil|startAnvil|useFrameIngress|startRedis|useRedis|startDevnet|startIngressProcess|runCli|runScript|spawn|spawnSync|execFile|execFileSync|fork)\(/;
const suites = readdirSync('dist/test', { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.test.js'))
  .map((entry) => join(entry.parentPath, entry.name))
  .filter((file) => !STARTS_A_PROCESS.test(readFileSync(file, 'utf8')));

module.exports = { spec: suites, timeout: 30000, exit: false, reporter: 'dot', require: ['dist/test/helpers/run-timeout.js'] };
