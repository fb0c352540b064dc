import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

describe('support/scratch: scratch directories go when the process exits', () => {
  it('removes every directory made, with what was written in it, at exit however it came', () => {
    for (const end of ['', 'process.exit(3);']) {
      const child = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { writeFileSync } from 'node:fs';
           import { scratchDir } from '${new URL('../../support/scratch.js', import.meta.url).href}';
           const dirs = [scratchDir('svc-scratch-test'), scratchDir('svc-scratch-test')];
           writeFileSync(dirs[0] + '/file', 'x');
           console.log(JSON.stringify(dirs));
           ${end}`,
        ],
        { encoding: 'utf8', timeout: 10_000 },
      );
      expect(child.stderr).to.equal('');
      const dirs = JSON.parse(child.stdout) as string[];
      expect(dirs).to.have.length(2);
      expect(dirs.map((dir) => existsSync(dir))).to.deep.equal([false, false]);
    }
  });
});
