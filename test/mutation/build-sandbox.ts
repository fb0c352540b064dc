/**
 * Stryker's build step, run inside its sandbox with the project directory as argument: links the
 * project's node_modules (Stryker would link it only after the build, and tsc needs the types)
 * and compiles the instrumented sources.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const project = process.argv[2];
if (project === undefined) throw new Error('usage: build-sandbox.js <project directory>');
if (!existsSync('node_modules')) symlinkSync(join(project, 'node_modules'), 'node_modules', 'dir');
const tsc = spawnSync(process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { stdio: 'inherit' });
process.exit(tsc.status ?? 1);
