// `npm run test:attacks`: the standing attack suite (issue 34, item 8). Each suite replays attacks
// against the running ingress (its own process, the shipped production file, a real anvil) and
// asserts what another source sees against its own baseline in the same run; README's "What the
// ingress promises" names the suite of each row. `npm test` runs these with everything else.
const suites = ['abuse', 'connections', 'el-fairness', 'estimate-flood', 'metered-work', 'sponsors', 'subscription-flood', 'victim'].map((name) => `dist/test/e2e/${name}.test.js`);

module.exports = { spec: suites, timeout: 30000, exit: false, reporter: 'spec', require: ['dist/test/helpers/run-timeout.js'] };
