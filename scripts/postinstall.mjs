// Applies patches/ (the frame state-gas patch of @ethereumjs/evm) in a checkout of this
// repository, where patch-package is installed with the dev dependencies. Installed as a
// dependency (for svc-ingress/client, say) there is no patch-package and nothing to patch for.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

let patchPackage;
try {
  patchPackage = createRequire(import.meta.url).resolve('patch-package/index.js');
} catch {
  process.exit(0);
}
const { status } = spawnSync(process.execPath, [patchPackage], { stdio: 'inherit' });
process.exit(status ?? 1);
